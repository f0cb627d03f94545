package forkexec

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Review of the vfork target (pidnsFork, vforkTarget): each step the target
// runs fails by name in both fork modes, and a first child that dies while
// it waits for the target does not leave Start waiting for ever.

// TestPIDNSTargetStepFails: every step the target runs after StepPID, and
// its exec, fails by name with the failing call's position, in the vfork
// target and the plain-fork one alike; the helper never runs (spawnHelper
// checks its marker) and every process of the run is reaped.
func TestPIDNSTargetStepFails(t *testing.T) {
	dir := t.TempDir()
	noInterp := filepath.Join(dir, "nointerp")
	notExec := filepath.Join(dir, "notexec")
	if err := os.WriteFile(noInterp, []byte("#!/nonexistent-procage-interp\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, plain := range []bool{false, true} {
		for _, s := range []Step{StepPID, StepRlimit, StepApply, StepConfirm, StepConsume, StepCloexec} {
			t.Run(fmt.Sprintf("plain=%v/%v", plain, s), func(t *testing.T) {
				forcePlainFork = plain
				defer func() { forcePlainFork = false }()
				_, err := spawnHelper(t, func(a *Attr) {
					pidnsAttr(a, false)
					// A passing call first: the failing one is the step's second.
					a.Calls = append(a.Calls, RawCall(s, syscall.SYS_GETPID), failingCall(t, s))
				})
				wantStepError(t, err, s, failingErrno)
				if se, ok := err.(*StepError); ok && se.Call != 2 {
					t.Errorf("StepError.Call = %d, want 2 (%v)", se.Call, err)
				}
				noChildren(t)
			})
		}
		for _, tc := range []struct {
			name, path string
			errno      syscall.Errno
		}{
			{"missing", "/nonexistent-procage", syscall.ENOENT},
			{"script without interpreter", noInterp, syscall.ENOENT},
			{"not executable", notExec, syscall.EACCES},
		} {
			t.Run(fmt.Sprintf("plain=%v/exec %s", plain, tc.name), func(t *testing.T) {
				forcePlainFork = plain
				defer func() { forcePlainFork = false }()
				_, err := spawnHelper(t, func(a *Attr) { pidnsAttr(a, false); a.Path = tc.path })
				wantStepError(t, err, StepExec, tc.errno)
				noChildren(t)
			})
		}
		// A script whose exec succeeds and that fails afterwards is a run
		// like any other: Start succeeds and Wait reports its status.
		t.Run(fmt.Sprintf("plain=%v/script fails after exec", plain), func(t *testing.T) {
			forcePlainFork = plain
			defer func() { forcePlainFork = false }()
			a := trueAttr(t)
			a.Path, a.Args = "/bin/sh", []string{"sh", "-c", "exit 7"}
			pidnsAttr(a, false)
			pr, err := StartProc(a)
			if err != nil {
				t.Fatal(err)
			}
			if ws, err := pr.Wait(); err != nil || ws.ExitStatus() != 7 {
				t.Errorf("status %#x, %v; want exit 7", ws, err)
			}
			noChildren(t)
		})
	}
}

// firstChild is the run's first child: a child of this process still in
// this pid namespace (pid 1 and the target are in the new one); 0 if none.
func firstChild(t *testing.T) int {
	t.Helper()
	self, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range ownChildren() {
		if c.state == "Z" {
			continue
		}
		if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", c.pid)); err == nil && ns == self {
			return c.pid
		}
	}
	return 0
}

// TestPIDNSFirstChildKilled: the first child is SIGKILLed while the
// target still runs its steps (blocked at StepPID on a read of a pipe the
// test holds). Start must still return within a bound, and if it returns
// an error nothing of the run may be left: neither pid 1 nor a target
// that went on to execute. With the plain fork the first child has
// already written the pids and exited by then; the vfork target's first
// child waits for the target's exec before it writes them, and pid 1
// waits for its SIGUSR1 (holding the status pipe) until then.
func TestPIDNSFirstChildKilled(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("plain=%v", plain), func(t *testing.T) {
			forcePlainFork = plain
			defer func() { forcePlainFork = false }()
			gate, release, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer gate.Close()
			defer release.Close()
			buf := make([]byte, 1)
			mark := filepath.Join(t.TempDir(), "ran")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			a := helperAttr(t, w, mark)
			pidnsAttr(a, false)
			a.Calls = append(a.Calls, RawCall(StepPID, syscall.SYS_READ, gate.Fd(), uintptr(unsafe.Pointer(&buf[0])), 1))
			// While the target blocks before its exec, the spawning thread
			// sits in its fork with preemption off (runtime_BeforeFork), so
			// a stop-the-world waits for the exec, which waits for the
			// release below: a GC cycle started by this goroutine's
			// allocations in between would deadlock the test (seen under
			// -race on 2 busy cores). os/exec's vfork has the same window,
			// only shorter; a run's own steps never wait for the caller.
			runtime.GC()
			gcPercent := debug.SetGCPercent(-1)
			defer debug.SetGCPercent(gcPercent)
			type result struct {
				pr  Proc
				err error
			}
			done := make(chan result, 1)
			go func() {
				pr, err := StartProc(a)
				done <- result{pr, err}
			}()
			time.Sleep(300 * time.Millisecond) // the target blocks in its read
			killed := 0
			if pid := firstChild(t); pid > 0 {
				killed = pid
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				time.Sleep(100 * time.Millisecond)
				// The vfork target runs on the caller's stack: the caller
				// must stay in its fork (ForkLock held) until the target
				// has executed, not return onto frames the target uses.
				locked := make(chan struct{})
				go func() { syscall.ForkLock.RLock(); close(locked); syscall.ForkLock.RUnlock() }()
				select {
				case <-locked:
					if vforkSupported && !plain {
						t.Errorf("the caller left its fork (ForkLock released) while the vfork target still ran on its stack")
					}
				case <-time.After(300 * time.Millisecond):
				}
			}
			release.Write([]byte{1}) // the target goes on to exec the helper
			debug.SetGCPercent(gcPercent)
			var res result
			select {
			case res = <-done:
			case <-time.After(10 * time.Second):
				// Unblock Start for the rest of the test binary: kill the
				// run's processes (the caller's children) by scanning.
				t.Errorf("first child %d killed: Start has not returned after 10s", killed)
				killRunChildren(t)
				res = <-done
			}
			w.Close()
			t.Logf("first child killed: %d; Start = %+v, %v", killed, res.pr, res.err)
			if res.err == nil {
				if ws, err := res.pr.Wait(); err != nil || ws != 0 {
					t.Errorf("helper: status %#x, %v", ws, err)
				}
			} else if _, err := os.Stat(mark); err == nil {
				t.Errorf("Start failed (%v) but the target executed", res.err)
			}
			killRunChildren(t)
			noChildren(t)
		})
	}
}

// killRunChildren SIGKILLs and reaps every child of this process (call it
// only while no Start runs, or when one is stuck: it may reap what Start
// would).
func killRunChildren(t *testing.T) {
	t.Helper()
	var left []int
	for _, c := range ownChildren() {
		left = append(left, c.pid)
	}
	for _, pid := range left {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(left) > 0 {
		t.Logf("killed the run's processes left: %v", left)
	}
	// In any order: pid 1 finishes exiting only once the target is reaped.
	for range left {
		if _, err := syscall.Wait4(-1, nil, 0, nil); err == syscall.ECHILD {
			break
		}
	}
}

// TestPIDNSTargetForkFails: the target's own fork fails (a seccomp filter
// the first child installs at StepNamespace answers clone with EAGAIN when
// its flags carry CLONE_VFORK, so pid 1's plain fork passes): Start reports
// StepPID EAGAIN, pid 1 is killed and everything is reaped. On the vfork
// path this is vforkTarget's own error record.
func TestPIDNSTargetForkFails(t *testing.T) {
	if !vforkSupported {
		t.Skip("no vfork target on " + runtime.GOARCH)
	}
	const nrOff, arg0Off = 0, 16
	filter := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: nrOff},
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: 0, Jf: 3, K: syscall.SYS_CLONE},
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: arg0Off},
		{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, Jt: 0, Jf: 1, K: syscall.CLONE_VFORK},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ERRNO | uint32(syscall.EAGAIN)},
		{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW},
	}
	prog := &unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, err := spawnHelper(t, func(a *Attr) {
		pidnsAttr(a, false)
		a.Calls = append(a.Calls,
			RawCall(StepNamespace, syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
			RawCall(StepNamespace, unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(prog))))
	})
	runtime.KeepAlive(filter)
	wantStepError(t, err, StepPID, syscall.EAGAIN)
	noChildren(t)
}

type child struct {
	pid   int
	state string // stat's third field: R, S, Z, ...
}

// ownChildren lists this process's children from /proc/PID/stat.
func ownChildren() []child {
	ents, _ := os.ReadDir("/proc")
	var out []child
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) >= 2 && f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, child{pid, f[0]})
		}
	}
	return out
}
