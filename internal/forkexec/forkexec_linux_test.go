package forkexec

import (
	"errors"
	"io"
	"os"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

const (
	truePath     = "/bin/true"
	rlimInfinity = ^uint64(0) // RLIM_INFINITY [confirmed: x/sys zerrors_linux.go]
)

var dlLibs = [2]string{"libc.so.6", "libm.so.6"}

func getsid(pid int) (int, error) { return unix.Getsid(pid) }

// Linux needs no sandbox calls.
func sandboxCalls(testing.TB) []Call { return nil }

// failingCall is fcntl(badfd, F_GETFD): EBADF at step's position.
func failingCall(_ testing.TB, step Step) Call {
	return RawCall(step, syscall.SYS_FCNTL, 1<<30, syscall.F_GETFD)
}

const failingErrno = syscall.EBADF

// TestConfirmResult: a Call with a result pointer passes only if the value
// is non-zero after the call. prlimit64(0, RLIMIT_NOFILE, NULL, &old) writes
// the (non-zero) soft limit into old[0] in the child; getpid writes nothing.
func TestConfirmResult(t *testing.T) {
	var stays uint64
	_, err := spawnHelper(t, func(a *Attr) {
		a.Calls = append(a.Calls, RawCall(StepConfirm, syscall.SYS_GETPID).WithResult(&stays))
	})
	wantStepError(t, err, StepConfirm, syscall.EPERM)

	var old [2]uint64
	_, err = spawnHelper(t, func(a *Attr) {
		a.Calls = append(a.Calls, RawCall(StepConfirm, syscall.SYS_PRLIMIT64, 0, syscall.RLIMIT_NOFILE, 0,
			uintptr(unsafe.Pointer(&old))).WithResult(&old[0]))
	})
	if err != nil {
		t.Errorf("confirm with a result the call sets: %v", err)
	}
}

// TestWithPID: the child stores its own pid in the slot before the call;
// the call writes the slot to a pipe the parent reads.
func TestWithPID(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var slot uint64
	rep, err := spawnHelper(t, func(a *Attr) {
		a.Files = append(a.Files, w.Fd())
		a.Calls = append(a.Calls, RawCall(StepConsume, syscall.SYS_WRITE, 3, uintptr(unsafe.Pointer(&slot)), 8).WithPID(&slot))
	})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got [8]byte
	if _, err := io.ReadFull(r, got[:]); err != nil {
		t.Fatal(err)
	}
	if pid := *(*uint64)(unsafe.Pointer(&got)); pid != uint64(rep.Pid) {
		t.Errorf("slot = %d, want the child's pid %d", pid, rep.Pid)
	}
	runtime.KeepAlive(&slot)
}

// TestFallbacks runs the fd-hygiene check through each fallback: plain
// fork instead of vfork, /proc/self/fd instead of close_range, and the
// fcntl loop.
func TestFallbacks(t *testing.T) {
	openExtraFDs(t, 300)
	for _, tc := range []struct {
		name string
		knob *bool
	}{
		{"plain fork", &forcePlainFork},
		{"proc listing", &forceCloexecFallback},
		{"fcntl loop", &forceProcFallback},
	} {
		t.Run(tc.name, func(t *testing.T) {
			*tc.knob = true
			if tc.knob == &forceProcFallback {
				forceCloexecFallback = true
			}
			defer func() { forcePlainFork, forceCloexecFallback, forceProcFallback = false, false, false }()
			rep, err := spawnHelper(t, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int{0, 1, 2}, rep.FDs); diff != "" {
				t.Errorf("child descriptors (-want +got):\n%s", diff)
			}
			_, err = spawnHelper(t, func(a *Attr) { a.Calls = append(a.Calls, failingCall(t, StepApply)) })
			wantStepError(t, err, StepApply, failingErrno)
		})
	}
}

// TestRawCallExpect: a call passes only with the expected errno, or with
// success and the expected return value; the failing call's position
// among its step's calls is reported.
func TestRawCallExpect(t *testing.T) {
	getppid := func(ret uintptr) Call { return RawCallExpect(StepConfirm, ret, 0, syscall.SYS_GETPPID) }
	badfd := func(want syscall.Errno) Call {
		return RawCallExpect(StepConfirm, 0, want, syscall.SYS_FCNTL, 1<<30, syscall.F_GETFD)
	}
	parent := uintptr(os.Getpid())
	tests := []struct {
		name  string
		calls []Call
		errno syscall.Errno // 0: the child runs
		call  int
	}{
		{"right return", []Call{getppid(parent)}, 0, 0},
		{"wrong return", []Call{getppid(parent), getppid(parent + 1)}, syscall.EPERM, 2},
		{"expected errno", []Call{badfd(syscall.EBADF)}, 0, 0},
		{"success where an errno is expected", []Call{getppid(parent), RawCallExpect(StepConfirm, 0, syscall.EBADF, syscall.SYS_GETPID)}, syscall.EPERM, 2},
		{"another errno is reported as is", []Call{badfd(syscall.EINVAL)}, syscall.EBADF, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spawnHelper(t, func(a *Attr) {
				// A call of an earlier step first: positions count within a step.
				a.Calls = append(a.Calls, RawCall(StepApply, syscall.SYS_GETPID))
				a.Calls = append(a.Calls, tc.calls...)
			})
			if tc.errno == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantStepError(t, err, StepConfirm, tc.errno)
			se, _ := err.(*StepError)
			if se == nil || se.Call != tc.call {
				t.Errorf("StepError %v: Call = %d, want %d", err, se.Call, tc.call)
			}
		})
	}
	// A built-in action's failure reports Call 0.
	_, err := spawnHelper(t, func(a *Attr) { a.Dir = "/nonexistent-procage-dir" })
	wantStepError(t, err, StepDir, syscall.ENOENT)
	if se, ok := err.(*StepError); !ok || se.Call != 0 {
		t.Errorf("chdir failure: %#v, want Call 0", err)
	}
}

// TestSlots: a call stores the fd it opened in a slot, later calls read it
// as an argument: openat a file the parent made, write through the stored
// fd, close it. The file holds what the child wrote.
func TestSlots(t *testing.T) {
	f := t.TempDir() + "/slot"
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	name, _ := syscall.BytePtrFromString(f)
	msg := []byte("written by fd from a slot")
	var fd uintptr = 1 << 30 // a bad fd unless the child overwrites it
	_, err := spawnHelper(t, func(a *Attr) {
		a.Calls = append(a.Calls,
			RawCall(StepNamespace, syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(name)), syscall.O_WRONLY|syscall.O_CLOEXEC).StoreResult(&fd),
			RawCall(StepNamespace, syscall.SYS_WRITE, 0, uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg))).ArgFrom(0, &fd),
			RawCall(StepNamespace, syscall.SYS_CLOSE, 0).ArgFrom(0, &fd))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(f); string(got) != string(msg) {
		t.Errorf("file holds %q, want %q", got, msg)
	}
	runtime.KeepAlive(name)

	// Without the store the write goes to the slot's initial (bad) fd.
	var bad uintptr = 1 << 30
	_, err = spawnHelper(t, func(a *Attr) {
		a.Calls = append(a.Calls, RawCall(StepNamespace, syscall.SYS_WRITE, 0, uintptr(unsafe.Pointer(&msg[0])), 1).ArgFrom(0, &bad))
	})
	wantStepError(t, err, StepNamespace, syscall.EBADF)
}

// TestWantEqual: the child opens a path and fstats it; the step passes
// when (dev, ino) are the parent's record and fails with ESTALE when the
// name was swapped for another file after the parent looked.
func TestWantEqual(t *testing.T) {
	dir := t.TempDir()
	p := dir + "/d"
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	name, _ := syscall.BytePtrFromString(p)
	calls := func(buf *syscall.Stat_t, fd *uintptr) []Call {
		return []Call{
			RawCall(StepNamespace, syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(name)), unix.O_PATH|syscall.O_CLOEXEC).StoreResult(fd),
			RawCall(StepNamespace, syscall.SYS_FSTAT, 0, uintptr(unsafe.Pointer(buf))).ArgFrom(0, fd).
				WantEqual(&buf.Dev, st.Dev).WantEqual(&buf.Ino, st.Ino),
		}
	}
	var buf syscall.Stat_t
	var fd uintptr
	if _, err := spawnHelper(t, func(a *Attr) { a.Calls = append(a.Calls, calls(&buf, &fd)...) }); err != nil {
		t.Fatalf("same inode: %v", err)
	}
	// A rename swap: the recorded directory moves away, another takes its name.
	if err := os.Rename(p, dir+"/moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	var buf2 syscall.Stat_t
	var fd2 uintptr
	_, err := spawnHelper(t, func(a *Attr) { a.Calls = append(a.Calls, calls(&buf2, &fd2)...) })
	wantStepError(t, err, StepNamespace, syscall.ESTALE)
	var se *StepError
	if errors.As(err, &se) && se.Call != 2 {
		t.Errorf("failing call = %d, want 2 (the fstat)", se.Call)
	}
	runtime.KeepAlive(name)
}
