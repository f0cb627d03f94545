package forkexec

import (
	"errors"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/internal/testenv"
)

const (
	truePath     = "/usr/bin/true"
	rlimInfinity = 1<<63 - 1 // RLIM_INFINITY [confirmed: x/sys zerrors_darwin_arm64.go]
)

var dlLibs = [2]string{"/usr/lib/libz.1.dylib", "/usr/lib/libc++.1.dylib"}

func getsid(pid int) (int, error) { return unix.Getsid(pid) }

// cProfile mirrors sandbox_profile_t's struct {builtin, data, size}
// [confirmed: Chromium seatbelt.cc, WebKit SandboxSPI.h].
type cProfile struct {
	builtin *byte
	data    *byte
	size    uintptr
}

// allowDefault compiles (version 1)(allow default) once, test-locally
// (internal/libsandbox is separate), and copies the bytecode into Go memory.
var allowDefault = sync.OnceValues(func() ([]byte, error) {
	lib, err := purego.Dlopen("/usr/lib/libsandbox.1.dylib", purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, err
	}
	var compile func(text string, params uintptr, errp **byte) *cProfile
	var free func(*cProfile)
	purego.RegisterLibFunc(&compile, lib, "sandbox_compile_string")
	purego.RegisterLibFunc(&free, lib, "sandbox_free_profile")
	var cerr *byte
	p := compile("(version 1)(allow default)", 0, &cerr)
	if p == nil {
		return nil, errors.New("sandbox_compile_string failed")
	}
	defer free(p)
	if p.builtin != nil || p.size == 0 {
		return nil, errors.New("sandbox_compile_string returned no bytecode")
	}
	return append([]byte(nil), unsafe.Slice(p.data, p.size)...), nil
})

// sandboxCalls returns the apply and confirm calls darwin requires: Sandbox
// call 0 with {bytecode, length, 0...} (a zeroed block of 8 words, as
// internal/libsandbox's NewApply builds) and call 2 "is sandboxed" on the
// child's own pid with a result slot (0xa0 bytes, as its NewSelfCheck
// builds). It skips (internal/testenv) only when the test process is
// already sandboxed; any other failure fails the test.
func sandboxCalls(tb testing.TB) []Call {
	tb.Helper()
	testenv.RequireUnsandboxed(tb)
	bc, err := allowDefault()
	if err != nil {
		tb.Fatalf("compiling the test profile: %v", err)
	}
	policy, _ := syscall.BytePtrFromString("Sandbox")
	apply := new([8]uint64)
	apply[0] = uint64(uintptr(unsafe.Pointer(&bc[0])))
	apply[1] = uint64(len(bc))
	check := new([0xa0 / 8]uint64)
	result := new(uint64)
	check[0] = uint64(uintptr(unsafe.Pointer(result)))
	a, err := MacSyscall(StepApply, policy, 0, unsafe.Pointer(apply), nil)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := MacSyscall(StepConfirm, policy, 2, unsafe.Pointer(check), result)
	if err != nil {
		tb.Fatal(err)
	}
	// The blocks hold bc and result as integers: keep them reachable.
	tb.Cleanup(func() { _, _ = bc[0], *result })
	return []Call{a, c.WithPID(&check[1])}
}

var noSuchPolicy, _ = syscall.BytePtrFromString("procage-no-such-policy")

// failingCall asks an unknown MAC policy: ENOPOLICY [confirmed: xnu
// security/mac_base.c __mac_syscall].
func failingCall(tb testing.TB, step Step) Call {
	c, err := MacSyscall(step, noSuchPolicy, 0, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

const failingErrno = syscall.ENOPOLICY

// TestStartRefusesUnsandboxed: without an apply call and a confirm call
// with a result slot, Start refuses before forking.
func TestStartRefusesUnsandboxed(t *testing.T) {
	calls := sandboxCalls(t)
	apply, confirm := calls[0], calls[1]
	bare, err := MacSyscall(StepConfirm, noSuchPolicy, 2, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		calls []Call
	}{
		{"none", nil},
		{"apply only", []Call{apply}},
		{"confirm only", []Call{confirm}},
		{"confirm without result", []Call{apply, bare}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := trueAttr(t)
			a.Calls = tc.calls
			if _, err := Start(a); !errors.Is(err, ErrNotSandboxed) {
				t.Errorf("Start = %v, want ErrNotSandboxed", err)
			}
		})
	}
	runTrue(t, trueAttr(t))
}

// TestConfirmIgnoresStaleResult: a confirm whose call succeeds without
// writing its result slot fails closed even if the slot held a non-zero
// value at fork; the child clears the slot before the call. getpid stands
// in for a call that returns success and writes nothing.
func TestConfirmIgnoresStaleResult(t *testing.T) {
	a := trueAttr(t)
	f, err := loadFns()
	if err != nil {
		t.Fatal(err)
	}
	stale := new(uint64)
	*stale = 1
	a.Calls = append(a.Calls, Call{step: StepConfirm, fn: f.getpid}.WithResult(stale))
	_, err = Start(a)
	wantStepError(t, err, StepConfirm, syscall.EPERM)
}
