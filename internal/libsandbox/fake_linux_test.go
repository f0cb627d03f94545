package libsandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/google/go-cmp/cmp"
)

// Allocation kinds, as in testdata/fake.h.
const (
	kindParams int32 = iota + 1
	kindParamsArray
	kindProfile
	kindBytecode
	kindBuiltin
	kindError
	kindToken
	kindMax
)

// fake is one private instance of the fake libraries (testdata/*.c) and the
// query functions they export. Each instance has its own state.
type fake struct {
	dir, sandboxPath, systemPath string

	live, total                          func(kind int32) int64
	badFrees, overlaps, bytecodePoisoned func() int64
	profileSize                          func() int64
	profileOffset                        func(field int32) int64

	setSandboxed              func(pid int32)
	checkCalls, filteredCalls func() int64
	lastCheck                 func(i int32) int64
	lastCheckOp               func() string
	rawCalls                  func() int64
	rawField                  func(i int32) int64
	rawOp, rawArg             func() string
	released                  func(h int64) int64

	// direct entry points for the overlap-detector self test
	compileString func(text string, params unsafe.Pointer, errp **byte) *cProfile
	freeProfile   func(p *cProfile)
}

var fakeSeq atomic.Int64

// cc returns the C compiler command from `go env CC`.
func cc(tb testing.TB) []string {
	tb.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		tb.Fatalf("building the fake libsandbox needs the go command to run `go env CC`: %v", err)
	}
	out, err := exec.Command(goTool, "env", "CC").Output()
	if err != nil {
		tb.Fatalf("`go env CC` failed: %v", err)
	}
	cmd := strings.Fields(string(out))
	if len(cmd) == 0 {
		tb.Fatalf("`go env CC` is empty: the fake libsandbox test needs a C compiler (set CC)")
	}
	if _, err := exec.LookPath(cmd[0]); err != nil {
		tb.Fatalf("C compiler %q from `go env CC` not found: the fake libsandbox test needs it (install one or set CC): %v", cmd[0], err)
	}
	return cmd
}

func compileC(tb testing.TB, ccCmd []string, out string, args ...string) {
	tb.Helper()
	argv := append(append([]string{}, ccCmd[1:]...), "-shared", "-fPIC", "-Wall", "-Werror", "-o", out)
	argv = append(argv, args...)
	cmd := exec.Command(ccCmd[0], argv...)
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("`go env CC` (%s) failed building %s: %v\n%s", ccCmd[0], filepath.Base(out), err, b)
	}
}

// buildFake compiles the fakes under tb.TempDir(). The allocator library gets
// a unique name: the loader shares a DT_NEEDED library by name, and every
// instance must keep its own counters.
func buildFake(tb testing.TB, extraSystemFlags ...string) *fake {
	tb.Helper()
	ccCmd := cc(tb)
	dir := tb.TempDir()
	src, err := filepath.Abs("testdata")
	if err != nil {
		tb.Fatal(err)
	}
	n := fakeSeq.Add(1)
	alloc := fmt.Sprintf("fakealloc%d_%d", os.Getpid(), n)
	f := &fake{
		dir:         dir,
		sandboxPath: filepath.Join(dir, "libfakesandbox.so"),
		systemPath:  filepath.Join(dir, "libfakesystem.so"),
	}
	link := []string{"-I", src, "-L", dir, "-l" + alloc, "-Wl,-rpath,$ORIGIN"}
	compileC(tb, ccCmd, filepath.Join(dir, "lib"+alloc+".so"), "-I", src, filepath.Join(src, "fake_alloc.c"))
	compileC(tb, ccCmd, f.sandboxPath, append([]string{filepath.Join(src, "fake_sandbox.c")}, link...)...)
	compileC(tb, ccCmd, f.systemPath, append(append([]string{filepath.Join(src, "fake_system.c")}, link...), extraSystemFlags...)...)
	return f
}

// load opens f through the binding and binds its query functions.
func (f *fake) load(tb testing.TB) *Lib {
	tb.Helper()
	l, err := open(f.sandboxPath, f.systemPath)
	if err != nil {
		tb.Fatalf("open(fake): %v", err)
	}
	sb, err := purego.Dlopen(f.sandboxPath, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		tb.Fatal(err)
	}
	sys, err := purego.Dlopen(f.systemPath, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		tb.Fatal(err)
	}
	// The allocator's queries are found through libfakesystem's dependencies.
	purego.RegisterLibFunc(&f.live, sys, "fake_live")
	purego.RegisterLibFunc(&f.total, sys, "fake_total")
	purego.RegisterLibFunc(&f.badFrees, sys, "fake_bad_frees")
	purego.RegisterLibFunc(&f.overlaps, sys, "fake_overlaps")
	purego.RegisterLibFunc(&f.bytecodePoisoned, sys, "fake_last_bytecode_poisoned")
	purego.RegisterLibFunc(&f.profileSize, sb, "fake_profile_size")
	purego.RegisterLibFunc(&f.profileOffset, sb, "fake_profile_offset")
	purego.RegisterLibFunc(&f.compileString, sb, "sandbox_compile_string")
	purego.RegisterLibFunc(&f.freeProfile, sb, "sandbox_free_profile")
	purego.RegisterLibFunc(&f.setSandboxed, sys, "fake_set_sandboxed")
	purego.RegisterLibFunc(&f.checkCalls, sys, "fake_check_calls")
	purego.RegisterLibFunc(&f.filteredCalls, sys, "fake_filtered_check_calls")
	purego.RegisterLibFunc(&f.lastCheck, sys, "fake_last_check")
	purego.RegisterLibFunc(&f.lastCheckOp, sys, "fake_last_check_op")
	purego.RegisterLibFunc(&f.rawCalls, sys, "fake_raw_calls")
	purego.RegisterLibFunc(&f.rawField, sys, "fake_raw_field")
	purego.RegisterLibFunc(&f.rawOp, sys, "fake_raw_op")
	purego.RegisterLibFunc(&f.rawArg, sys, "fake_raw_arg")
	purego.RegisterLibFunc(&f.released, sys, "fake_released")
	return l
}

func newFake(tb testing.TB) (*fake, *Lib) {
	tb.Helper()
	f := buildFake(tb)
	return f, f.load(tb)
}

// checkBalanced fails unless every block the fakes handed out was freed,
// each through the function that owns it.
func (f *fake) checkBalanced(tb testing.TB) {
	tb.Helper()
	names := []string{"", "params", "params array", "profile", "bytecode", "builtin name", "error string", "token"}
	for k := kindParams; k < kindMax; k++ {
		if n := f.live(k); n != 0 {
			tb.Errorf("%d %s allocation(s) of the fake were not freed", n, names[k])
		}
	}
	if n := f.badFrees(); n != 0 {
		tb.Errorf("%d bad free(s): a block freed twice, by the wrong function, or not from the fake", n)
	}
}

func TestFakeProfileLayout(t *testing.T) {
	f, _ := newFake(t)
	type layout struct{ Size, Builtin, Data, SizeField int64 }
	want := layout{
		Size:      int64(unsafe.Sizeof(cProfile{})),
		Builtin:   int64(unsafe.Offsetof(cProfile{}.builtin)),
		Data:      int64(unsafe.Offsetof(cProfile{}.data)),
		SizeField: int64(unsafe.Offsetof(cProfile{}.size)),
	}
	got := layout{f.profileSize(), f.profileOffset(0), f.profileOffset(1), f.profileOffset(2)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Go cProfile vs C profile_t layout (-Go +C):\n%s", diff)
	}
	if want.Size != 24 {
		t.Errorf("sizeof(cProfile) = %d, want 24 (Chromium seatbelt.cc, WebKit SandboxSPI.h)", want.Size)
	}
}

func TestFakeCompile(t *testing.T) {
	f, l := newFake(t)
	tests := []struct {
		name   string
		text   string
		params []Param
		want   string
		reason string
	}{
		{"no params", "(version 1)(deny default)", nil,
			"FAKEBC1\n(version 1)(deny default)\n", "plain compile"},
		{"params", `(version 1)(allow file-read* (subpath (param "HOME")))`,
			[]Param{{"HOME", "/Users/x"}, {"RUN_MARKER", "org.procage.run.1.abc"}},
			"FAKEBC1\n(version 1)(allow file-read* (subpath (param \"HOME\")))\nHOME=/Users/x\nRUN_MARKER=org.procage.run.1.abc\n",
			"the fake reads every key and value during compile"},
		{"many params", "(version 1)",
			[]Param{{"A", "1"}, {"B", "22"}, {"C", "333"}, {"D", ""}, {"E", "5"}},
			"FAKEBC1\n(version 1)\nA=1\nB=22\nC=333\nD=\nE=5\n",
			"the fake's params array grows; an empty value is a valid string"},
		{"error string after success", "(version 1)(warn)", nil,
			"FAKEBC1\n(version 1)(warn)\n", "a non-NULL *error after success is freed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, err := l.Compile(tt.text, tt.params)
			if err != nil {
				t.Fatalf("Compile: %v (%s)", err, tt.reason)
			}
			if diff := cmp.Diff(tt.want, string(code)); diff != "" {
				t.Errorf("bytecode (-want +got) (%s):\n%s", tt.reason, diff)
			}
			// The fake poisoned the C buffer on free; the copy above is
			// intact, so it was taken before the free.
			if p := f.bytecodePoisoned(); p != 1 {
				t.Errorf("fake did not see its bytecode buffer poisoned on free (got %d)", p)
			}
			f.checkBalanced(t)
		})
	}
	if got := f.total(kindError); got != 1 {
		t.Errorf("fake issued %d error strings, want 1 (the warning case)", got)
	}
	if got, want := l.Compiles(), int64(len(tests)); got != want {
		t.Errorf("Compiles() = %d, want %d", got, want)
	}
}

func TestFakeCompileError(t *testing.T) {
	f, l := newFake(t)
	for _, params := range [][]Param{nil, {{"K", "v"}}} {
		_, err := l.Compile("(version 1)(fail unbound variable: foo)", params)
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Fatalf("Compile error = %v (%T), want *CompileError", err, err)
		}
		if diff := cmp.Diff("unbound variable: foo", ce.Message); diff != "" {
			t.Errorf("CompileError.Message (-want +got):\n%s", diff)
		}
		if errors.Is(err, errors.ErrUnsupported) {
			t.Error("a compile error must not read as unsupported")
		}
		f.checkBalanced(t)
	}
	if got := f.total(kindError); got != 2 {
		t.Errorf("fake issued %d error strings, want 2", got)
	}
}

func TestFakeCompileRejectsBuiltin(t *testing.T) {
	f, l := newFake(t)
	code, err := l.Compile("(version 1)(builtin)", nil)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || code != nil {
		t.Fatalf("Compile = %q, %v; want nil, *UnsupportedError", code, err)
	}
	if ue.Symbol != "sandbox_compile_string" || ue.Library != f.sandboxPath {
		t.Errorf("UnsupportedError names %s in %s, want sandbox_compile_string in %s", ue.Symbol, ue.Library, f.sandboxPath)
	}
	if f.total(kindBuiltin) != 1 {
		t.Errorf("fake did not return a builtin profile")
	}
	f.checkBalanced(t)
}

// sink keeps garbage reachable long enough to reuse freed memory.
var sink [][]byte

func TestFakeCompileParamsOutliveCall(t *testing.T) {
	f, l := newFake(t)
	params := []Param{{"KEY_ONE", "value-one"}, {"KEY_TWO", "/private/tmp/value-two"}}
	// While libsandbox holds the pointers, collect and refill the heap with
	// garbage of nearby size classes: a parameter buffer that was not kept
	// alive would be overwritten with 'X' before the compile reads it.
	l.afterSetParams = func() {
		for range 2 {
			runtime.GC()
			sink = nil
			for _, size := range []int{32, 48, 64, 80, 96} {
				for range 3000 {
					b := make([]byte, size)
					for i := range b {
						b[i] = 'X'
					}
					sink = append(sink, b)
				}
			}
		}
	}
	want := "FAKEBC1\n(version 1)\nKEY_ONE=value-one\nKEY_TWO=/private/tmp/value-two\n"
	for i := range 4 {
		code, err := l.Compile("(version 1)", params)
		sink = nil
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, string(code)); diff != "" {
			t.Fatalf("compile %d: bytecode (-want +got):\n%s", i, diff)
		}
	}
	f.checkBalanced(t)
}

func TestFakeCompileConcurrent(t *testing.T) {
	f, l := newFake(t)
	const goroutines, each = 16, 4
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				text := fmt.Sprintf("(version 1)(g %d %d)", g, i)
				params := []Param{{"G", fmt.Sprint(g)}, {"I", fmt.Sprint(i)}}
				code, err := l.Compile(text, params)
				want := fmt.Sprintf("FAKEBC1\n%s\nG=%d\nI=%d\n", text, g, i)
				if err != nil {
					errs <- err
				} else if string(code) != want {
					errs <- fmt.Errorf("goroutine %d compile %d: got %q, want %q", g, i, code, want)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := f.overlaps(); n != 0 {
		t.Errorf("fake saw %d overlapping compiles; Compile must serialise them", n)
	}
	if got := l.Compiles(); got != goroutines*each {
		t.Errorf("Compiles() = %d, want %d", got, goroutines*each)
	}
	f.checkBalanced(t)
}

// TestFakeDetectsOverlap shows the overlap detector works, by calling the
// fake compiler from several goroutines without the binding's mutex.
func TestFakeDetectsOverlap(t *testing.T) {
	f, _ := newFake(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 8 {
				if p := f.compileString("(version 1)", nil, nil); p != nil {
					f.freeProfile(p)
				}
			}
		})
	}
	wg.Wait()
	if f.overlaps() == 0 {
		t.Error("fake saw no overlap among 64 unsynchronised compiles; the concurrency test would prove nothing")
	}
}

func TestFakeCompileInvalidArgument(t *testing.T) {
	f, l := newFake(t)
	tests := []struct {
		name   string
		text   string
		params []Param
	}{
		{"NUL in text", "(version 1)\x00(allow default)", nil},
		{"NUL in key", "(version 1)", []Param{{"K\x00", "v"}}},
		{"NUL in value", "(version 1)", []Param{{"K", "v\x00w"}}},
		{"empty key", "(version 1)", []Param{{"", "v"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := l.Compile(tt.text, tt.params); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Compile error = %v, want ErrInvalidArgument", err)
			}
		})
	}
	if l.Compiles() != 0 || f.total(kindProfile) != 0 || f.total(kindParams) != 0 {
		t.Errorf("invalid input reached the library: %d compiles, %d profiles, %d params",
			l.Compiles(), f.total(kindProfile), f.total(kindParams))
	}
}

func TestFakeMissingSymbol(t *testing.T) {
	f := buildFake(t)
	noMac := buildFake(t, "-DFAKE_OMIT_MAC_SYSCALL")
	tests := []struct {
		name            string
		sandbox, system string
		symbol, library string
		reason          string
	}{
		{"libsystem symbols looked up in libSystem", f.sandboxPath, f.sandboxPath,
			"sandbox_free_error", f.sandboxPath, "the first libSystem symbol is not in libsandbox"},
		{"libsandbox symbols looked up in libsandbox", f.systemPath, f.systemPath,
			"sandbox_compile_string", f.systemPath, "the compiler is not in libSystem"},
		{"last table entry resolved too", noMac.sandboxPath, noMac.systemPath,
			"__mac_syscall", noMac.systemPath, "every entry is resolved at load"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := open(tt.sandbox, tt.system)
			var ue *UnsupportedError
			if l != nil || !errors.As(err, &ue) {
				t.Fatalf("open = %v, %v; want nil, *UnsupportedError (%s)", l, err, tt.reason)
			}
			if diff := cmp.Diff([2]string{tt.symbol, tt.library}, [2]string{ue.Symbol, ue.Library}); diff != "" {
				t.Errorf("symbol, library (-want +got) (%s):\n%s", tt.reason, diff)
			}
			if !errors.Is(err, errors.ErrUnsupported) || ue.Err == nil {
				t.Errorf("error %v: want errors.Is ErrUnsupported with a cause", err)
			}
			if !strings.HasPrefix(ue.OSBuild, "linux") {
				t.Errorf("OSBuild = %q, want the linux kernel release", ue.OSBuild)
			}
			// The message must name the symbol and the OS build.
			if msg := err.Error(); !strings.Contains(msg, tt.symbol) || !strings.Contains(msg, ue.OSBuild) {
				t.Errorf("message %q does not name %s and %s", msg, tt.symbol, ue.OSBuild)
			}
		})
	}
}

func TestFakeMissingLibrary(t *testing.T) {
	f := buildFake(t)
	missing := filepath.Join(f.dir, "libnothere.so")
	l, err := open(f.sandboxPath, missing)
	var ue *UnsupportedError
	if l != nil || !errors.As(err, &ue) {
		t.Fatalf("open = %v, %v; want nil, *UnsupportedError", l, err)
	}
	if diff := cmp.Diff([2]string{"", missing}, [2]string{ue.Symbol, ue.Library}); diff != "" {
		t.Errorf("symbol, library (-want +got):\n%s", diff)
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("errors.Is(%v, ErrUnsupported) = false", err)
	}
}

// TestLoadFailsOnLinux: the real libraries do not exist here; every
// concurrent caller gets the one cached error.
func TestLoadFailsOnLinux(t *testing.T) {
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	libs := make([]*Lib, n)
	for i := range n {
		wg.Go(func() { libs[i], errs[i] = Load() })
	}
	wg.Wait()
	var ue *UnsupportedError
	if !errors.As(errs[0], &ue) || ue.Library != LibsandboxPath || ue.Symbol != "" {
		t.Fatalf("Load() = %v, want *UnsupportedError for %s", errs[0], LibsandboxPath)
	}
	for i := range n {
		if libs[i] != nil || errs[i] != errs[0] {
			t.Errorf("Load() #%d = %v, %v; want nil and the cached error", i, libs[i], errs[i])
		}
	}
}

func TestFakeIsSandboxed(t *testing.T) {
	f, l := newFake(t)
	f.setSandboxed(4242)
	tests := []struct {
		pid  int
		want bool
	}{
		{4242, true},
		{os.Getpid(), false},
	}
	for _, tt := range tests {
		got, err := l.IsSandboxed(tt.pid)
		if err != nil || got != tt.want {
			t.Errorf("IsSandboxed(%d) = %v, %v; want %v, nil", tt.pid, got, err, tt.want)
		}
		// pid, type, op == NULL: the fixed-argument form only.
		if diff := cmp.Diff([3]int64{int64(tt.pid), 0, 1}, [3]int64{f.lastCheck(0), f.lastCheck(1), f.lastCheck(2)}); diff != "" {
			t.Errorf("sandbox_check(pid, type, op==NULL) (-want +got):\n%s", diff)
		}
	}
	// The fake returns -1 for pid 0: an error, not a verdict.
	if got, err := l.IsSandboxed(0); err == nil {
		t.Errorf("IsSandboxed(0) = %v, nil; want the -1 return as an error", got)
	}
	calls := f.checkCalls()
	if _, err := l.IsSandboxed(-5); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("IsSandboxed(-5) error = %v, want ErrInvalidArgument", err)
	}
	if f.checkCalls() != calls {
		t.Error("an invalid pid reached sandbox_check")
	}
	if f.rawCalls() != 0 {
		t.Errorf("IsSandboxed used __mac_syscall %d times, want sandbox_check only", f.rawCalls())
	}
}

func TestFakeCheckFilteredUsesRawCall(t *testing.T) {
	f, l := newFake(t)
	type seen struct {
		Pid, Kind, Flags, Ident, ReservedNonZero, ResultNull, OpNull, ArgNull int64
		Op, Arg                                                               string
	}
	tests := []struct {
		name       string
		pid        int
		op         string
		ft         FilterType
		arg        string
		flags      CheckFlags
		wantDenied bool
		want       seen
	}{
		{"marker allowed", 4242, "mach-lookup", FilterGlobalName, "org.procage.run.1.a", CheckNoReport, false,
			seen{Pid: 4242, Kind: 6, Flags: 0x1, Op: "mach-lookup", Arg: "org.procage.run.1.a"}},
		{"marker denied", 4243, "mach-lookup", FilterGlobalName, "deny.org.procage", CheckNoReport, true,
			seen{Pid: 4243, Kind: 6, Flags: 0x1, Op: "mach-lookup", Arg: "deny.org.procage"}},
		{"path canonical nofollow", 7, "file-read-data", FilterPath, "/private/tmp/m", CheckCanonical | CheckNoFollow, false,
			seen{Pid: 7, Kind: 1, Flags: 0x2 | 0x8, Op: "file-read-data", Arg: "/private/tmp/m"}},
		{"xpc no flags", 8, "mach-lookup", FilterXPCServiceName, "deny.svc", 0, true,
			seen{Pid: 8, Kind: 50, Op: "mach-lookup", Arg: "deny.svc"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			denied, err := l.Check(tt.pid, tt.op, tt.ft, tt.arg, tt.flags)
			if err != nil || denied != tt.wantDenied {
				t.Fatalf("Check = %v, %v; want %v, nil", denied, err, tt.wantDenied)
			}
			if got := f.rawCalls(); got != int64(i+1) {
				t.Fatalf("__mac_syscall calls = %d, want %d", got, i+1)
			}
			got := seen{
				Pid: f.rawField(0), Kind: f.rawField(1), Flags: f.rawField(2), Ident: f.rawField(3),
				ReservedNonZero: f.rawField(4), ResultNull: f.rawField(5), OpNull: f.rawField(6), ArgNull: f.rawField(7),
				Op: f.rawOp(), Arg: f.rawArg(),
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("call-2 block as the fake read it (-want +got):\n%s", diff)
			}
		})
	}
	if n := f.filteredCalls(); n != 0 || f.checkCalls() != 0 {
		t.Errorf("sandbox_check called %d times (%d with a filter); filtered checks must use call 2", f.checkCalls(), n)
	}

	// No filter: sandbox_check with the public flags in the type argument.
	raw := f.rawCalls()
	denied, err := l.Check(4242, "process-fork", FilterNone, "", CheckNoReport)
	if err != nil || denied {
		t.Fatalf("Check(FilterNone) = %v, %v; want false, nil", denied, err)
	}
	if got := [2]any{f.lastCheck(1), f.lastCheckOp()}; got != [2]any{int64(CheckNoReport), "process-fork"} {
		t.Errorf("sandbox_check type, op = %v; want %#x, process-fork", got, CheckNoReport)
	}
	if f.rawCalls() != raw {
		t.Error("an unfiltered check went through __mac_syscall")
	}

	for _, bad := range []struct {
		ft    FilterType
		arg   string
		flags CheckFlags
	}{{FilterNotification, "x", 0}, {FilterNone, "x", 0}, {FilterNone, "", 0x1}, {FilterPath, "/a\x00", 0}} {
		if _, err := l.Check(1, "op", bad.ft, bad.arg, bad.flags); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("Check(%d, %q, %#x) error = %v, want ErrInvalidArgument", bad.ft, bad.arg, bad.flags, err)
		}
	}
}

func TestFakeExtensions(t *testing.T) {
	f, l := newFake(t)
	tok, err := l.IssueExtension(ExtensionReadWrite, "/private/tmp/grant")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("tok;com.apple.app-sandbox.read-write;/private/tmp/grant;0", tok); diff != "" {
		t.Errorf("token (-want +got):\n%s", diff)
	}
	if f.total(kindToken) != 1 {
		t.Errorf("fake issued %d tokens, want 1", f.total(kindToken))
	}
	f.checkBalanced(t) // the token was freed with the library's free

	if _, err := l.IssueExtension(ExtensionRead, "relative/path"); err == nil {
		t.Error("IssueExtension: the fake's NULL return was not reported")
	}
	if _, err := l.IssueExtension(ExtensionRead, "/a\x00b"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("IssueExtension(NUL) error = %v, want ErrInvalidArgument", err)
	}

	h, err := l.ConsumeExtension(tok)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ReleaseExtension(h); err != nil {
		t.Errorf("ReleaseExtension(%d): %v", h, err)
	}
	if f.released(h) != 1 {
		t.Errorf("fake did not see handle %d released", h)
	}
	if err := l.ReleaseExtension(h); err == nil {
		t.Error("second ReleaseExtension of one handle: want an error")
	}
	if _, err := l.ConsumeExtension("not a token"); err == nil {
		t.Error("ConsumeExtension(bad token): want an error")
	}
	f.checkBalanced(t)
}

func TestFakeMacSyscallAddr(t *testing.T) {
	f, l := newFake(t)
	h, err := purego.Dlopen(f.systemPath, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		t.Fatal(err)
	}
	want, err := purego.Dlsym(h, "__mac_syscall")
	if err != nil {
		t.Fatal(err)
	}
	if got := l.MacSyscallAddr(); got != want {
		t.Errorf("MacSyscallAddr() = %#x, want %#x", got, want)
	}
}
