package libsandbox

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// These tests run on the macOS lane against the real libraries. They fail,
// never skip, when the private interface does not work; only checks whose
// answer depends on it skip when the test process is already sandboxed.

func loadReal(t *testing.T) *Lib {
	t.Helper()
	l, err := Load()
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return l
}

// TestCanarySymbols resolves every entry of the symbol table in its library
// (the x/sys TestDarwinLoader pattern).
func TestCanarySymbols(t *testing.T) {
	l := loadReal(t)
	paths := [2]string{inLibsandbox: LibsandboxPath, inLibSystem: LibSystemPath}
	var handles [2]uintptr
	for i, p := range paths {
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			t.Fatalf("dlopen %s on %s: %v", p, osBuild(), err)
		}
		handles[i] = h
	}
	for id, s := range symbols {
		a, err := purego.Dlsym(handles[s.lib], s.name)
		if err != nil || a == 0 {
			t.Errorf("%s not in %s on %s: %v", s.name, paths[s.lib], osBuild(), err)
			continue
		}
		if l.addr[id] != a {
			t.Errorf("Lib resolved %s to %#x, dlsym gives %#x", s.name, l.addr[id], a)
		}
	}
}

func TestCanaryCompile(t *testing.T) {
	l := loadReal(t)
	before := l.Compiles()
	code, err := l.Compile("(version 1)(deny default)", nil)
	if err != nil {
		t.Fatalf("Compile((version 1)(deny default)) on %s: %v", osBuild(), err)
	}
	if len(code) == 0 {
		t.Fatal("Compile returned empty bytecode")
	}
	t.Logf("%s: (version 1)(deny default) compiles to %d bytes", osBuild(), len(code))

	// Parameters reach the compiler: the same profile with a parameter
	// compiles, and an unknown form is a CompileError with a message.
	code2, err := l.Compile(`(version 1)(deny default)(allow file-read* (literal (param "P")))`,
		[]Param{{"P", "/private/tmp/procage-canary"}})
	if err != nil || len(code2) == 0 {
		t.Fatalf("Compile with a parameter = %d bytes, %v", len(code2), err)
	}
	_, err = l.Compile("(version 1)(procage-no-such-form)", nil)
	var ce *CompileError
	if !errors.As(err, &ce) || ce.Message == "" {
		t.Errorf("Compile of an unknown form = %v, want *CompileError with libsandbox's message", err)
	}
	if got := l.Compiles() - before; got != 3 {
		t.Errorf("Compiles() grew by %d, want 3", got)
	}
}

// skipIfSandboxed skips when the test process already runs in a sandbox,
// which changes check answers and may forbid issuing extensions.
func skipIfSandboxed(t *testing.T, l *Lib) {
	t.Helper()
	sandboxed, err := l.IsSandboxed(os.Getpid())
	if err != nil {
		t.Fatalf("IsSandboxed(self) on %s: %v", osBuild(), err)
	}
	if sandboxed {
		t.Skip("the test process is already sandboxed (e.g. run under Codex or Claude Code): answers would reflect the outer sandbox")
	}
}

func TestCanaryChecks(t *testing.T) {
	l := loadReal(t)
	skipIfSandboxed(t, l)

	// The raw call-2 self check the child uses agrees: allowed, result 0.
	c := NewSelfCheck(os.Getpid())
	r, _, errno := purego.SyscallN(l.MacSyscallAddr(),
		uintptr(unsafe.Pointer(&PolicyName[0])), CallCheck, uintptr(c.Arg()))
	runtime.KeepAlive(c)
	if int32(r) != 0 || *c.Result() != 0 {
		t.Errorf("raw call-2 self check = %d (errno %d), result %d; want 0, 0 for an unsandboxed process", int32(r), errno, *c.Result())
	}

	// A filtered check (raw call 2, marker form) of an unsandboxed process:
	// nothing is denied.
	denied, err := l.Check(os.Getpid(), "mach-lookup", FilterGlobalName, "org.procage.canary.marker", CheckNoReport)
	if err != nil || denied {
		t.Errorf("marker check of self = %v, %v; want false, nil", denied, err)
	}
}

func TestCanaryIssueExtension(t *testing.T) {
	l := loadReal(t)
	skipIfSandboxed(t, l)
	dir, err := filepath.EvalSymlinks(t.TempDir()) // canonical: /var -> /private/var
	if err != nil {
		t.Fatal(err)
	}
	tok, err := l.IssueExtension(ExtensionRead, dir)
	if err != nil {
		t.Fatalf("IssueExtension(%s) on %s: %v", dir, osBuild(), err)
	}
	if tok == "" {
		t.Error("IssueExtension returned an empty token")
	}
	if _, err := NewConsume(tok); err != nil {
		t.Errorf("NewConsume(token): %v", err)
	}
}
