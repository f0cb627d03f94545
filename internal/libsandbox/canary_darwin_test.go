package libsandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/procage-go/procage/internal/report"
	"github.com/procage-go/procage/internal/testenv"
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

// compileRow is a compile's row in the kernel report (internal/report).
func compileRow(input string, code []byte, err error) report.CanaryRow {
	r := report.CanaryRow{Call: "sandbox_compile_string", Input: input, BytecodeSize: len(code)}
	if err != nil {
		r.Ret, r.Note = -1, err.Error()
	}
	return r
}

// rawRow is a raw __mac_syscall("Sandbox", 2) check's row.
func rawRow(what string, r uintptr, errno uintptr, result uint64) report.CanaryRow {
	return report.CanaryRow{Call: "__mac_syscall(Sandbox, 2)", Input: what, Ret: int64(int32(r)), Errno: int(errno), Result: result}
}

func TestCanaryCompile(t *testing.T) {
	l := loadReal(t)
	rep := report.Open(t, "canary") // PROCAGE_REPORT_DIR: sizes and raw results
	before := l.Compiles()
	code, err := l.Compile("(version 1)(deny default)", nil)
	rep.Canary(compileRow("(version 1)(deny default)", code, err))
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
	rep.Canary(compileRow(`(version 1)(deny default)(allow file-read* (literal (param "P"))) P=/private/tmp/procage-canary`, code2, err))
	if err != nil || len(code2) == 0 {
		t.Fatalf("Compile with a parameter = %d bytes, %v", len(code2), err)
	}
	_, err = l.Compile("(version 1)(procage-no-such-form)", nil)
	rep.Canary(compileRow("(version 1)(procage-no-such-form)", nil, err))
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
	// Skip only when the raw call-2 self check agrees: a broken
	// sandbox_check binding that always answered 1 would otherwise turn
	// every check canary into a skip instead of a failure.
	c := NewSelfCheck(os.Getpid())
	r, _, errno := purego.SyscallN(l.MacSyscallAddr(),
		uintptr(unsafe.Pointer(&PolicyName[0])), CallCheck, uintptr(c.Arg()))
	runtime.KeepAlive(c)
	if int32(r) != 0 {
		t.Fatalf("raw call-2 self check on %s = %d (errno %d)", osBuild(), int32(r), errno)
	}
	if raw := *c.Result() != 0; raw != sandboxed {
		t.Fatalf("sandbox_check says sandboxed=%v, raw call 2 says %v (result %d) on %s", sandboxed, raw, *c.Result(), osBuild())
	}
	if sandboxed {
		testenv.Skip(t, testenv.ReasonSandboxed, "answers would reflect the outer sandbox (e.g. run under Codex or Claude Code)")
	}
}

func TestCanaryChecks(t *testing.T) {
	l := loadReal(t)
	skipIfSandboxed(t, l)
	rep := report.Open(t, "canary")

	// The raw call-2 self check the child uses agrees: allowed, result 0.
	c := NewSelfCheck(os.Getpid())
	r, _, errno := purego.SyscallN(l.MacSyscallAddr(),
		uintptr(unsafe.Pointer(&PolicyName[0])), CallCheck, uintptr(c.Arg()))
	runtime.KeepAlive(c)
	rep.Canary(rawRow("self, unsandboxed", r, errno, *c.Result()))
	if int32(r) != 0 || *c.Result() != 0 {
		t.Errorf("raw call-2 self check = %d (errno %d), result %d; want 0, 0 for an unsandboxed process", int32(r), errno, *c.Result())
	}

	// A filtered check (raw call 2, marker form) of an unsandboxed process:
	// nothing is denied.
	denied, err := l.Check(os.Getpid(), "mach-lookup", FilterGlobalName, "org.procage.canary.marker", CheckNoReport)
	rep.Canary(report.CanaryRow{Call: "Check", Input: "self mach-lookup org.procage.canary.marker", Note: fmt.Sprintf("denied=%v err=%v", denied, err)})
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
	report.Open(t, "canary").Canary(report.CanaryRow{Call: "sandbox_extension_issue_file", Input: ExtensionRead, Note: fmt.Sprintf("token %d bytes, err=%v", len(tok), err)})
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

// TestCanaryCheckDenies runs the checks against a process that really is
// sandboxed. Against the unsandboxed test process every answer is "allowed",
// so a wrong kernel filter kind, flag translation or result reading would
// pass TestCanaryChecks vacuously; here a denial must be seen. The oracle is
// /usr/bin/sandbox-exec, which still works unsandboxed on macOS 26
// (nolabs-ai/nono#1646 shows it working outside an outer sandbox).
func TestCanaryCheckDenies(t *testing.T) {
	l := loadReal(t)
	skipIfSandboxed(t, l)
	const (
		deniedName = "org.procage.canary.denied"
		deniedPath = "/private/etc/hosts" // exists on every macOS
	)
	profile := fmt.Sprintf("(version 1)(allow default)"+
		"(deny mach-lookup (global-name %q))(deny file-read-data (literal %q))", deniedName, deniedPath)
	// sh prints only after sandbox-exec has applied the profile and exec'd
	// it, so reading the line proves the pid is sandboxed (and alive).
	cmd := exec.Command("/usr/bin/sandbox-exec", "-p", profile, "/bin/sh", "-c", "echo ready; exec /bin/sleep 60")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting sandbox-exec on %s: %v", osBuild(), err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("read %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("sandbox-exec child on %s did not start: %v", osBuild(), err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("sandbox-exec child on %s did not start within 30s", osBuild())
	}
	pid := cmd.Process.Pid
	rep := report.Open(t, "canary")

	if sb, err := l.IsSandboxed(pid); err != nil || !sb {
		t.Errorf("IsSandboxed(sandbox-exec child) = %v, %v; want true", sb, err)
	}
	c := NewSelfCheck(pid)
	r, _, errno := purego.SyscallN(l.MacSyscallAddr(),
		uintptr(unsafe.Pointer(&PolicyName[0])), CallCheck, uintptr(c.Arg()))
	runtime.KeepAlive(c)
	rep.Canary(rawRow("sandbox-exec child", r, errno, *c.Result()))
	if int32(r) != 0 || *c.Result() == 0 {
		t.Errorf("raw call-2 check of the sandboxed child = %d (errno %d), result %d; want 0, non-zero", int32(r), errno, *c.Result())
	}
	for _, tc := range []struct {
		op   string
		ft   FilterType
		arg  string
		want bool
	}{
		{"mach-lookup", FilterGlobalName, deniedName, true},
		{"mach-lookup", FilterGlobalName, deniedName + ".sibling", false},
		{"file-read-data", FilterPath, deniedPath, true},
		{"file-read-data", FilterPath, "/private/etc/shells", false},
	} {
		denied, err := l.Check(pid, tc.op, tc.ft, tc.arg, CheckNoReport)
		rep.Canary(report.CanaryRow{Call: "Check", Input: fmt.Sprintf("sandbox-exec child %s filter %d %s", tc.op, tc.ft, tc.arg), Note: fmt.Sprintf("denied=%v err=%v", denied, err)})
		if err != nil || denied != tc.want {
			t.Errorf("Check(child, %s, filter %d, %q) on %s = %v, %v; want %v", tc.op, tc.ft, tc.arg, osBuild(), denied, err, tc.want)
		}
	}
}
