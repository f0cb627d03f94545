package forkexec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/internal/testenv"
)

// nsCalls are the StepNamespace calls a pid-namespace run needs here (in
// the product, internal/linuxsandbox's NamespaceCalls): a user namespace
// unless root (the pid and mount namespaces must belong to one the caller
// owns) or if user is set, with the caller's ids mapped 1:1, and a mount
// namespace, private, for the fresh /proc.
func nsCalls(user bool) []Call {
	user = user || os.Geteuid() != 0
	f := uintptr(syscall.CLONE_NEWNS)
	if user {
		f |= syscall.CLONE_NEWUSER
	}
	cs := []Call{RawCall(StepNamespace, syscall.SYS_UNSHARE, f)}
	write := func(path, s string) {
		p, b := append([]byte(path), 0), []byte(s)
		fd := new(uintptr)
		cs = append(cs,
			RawCall(StepNamespace, syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&p[0])), syscall.O_WRONLY|syscall.O_CLOEXEC).StoreResult(fd),
			RawCall(StepNamespace, syscall.SYS_WRITE, 0, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b))).ArgFrom(0, fd),
			RawCall(StepNamespace, syscall.SYS_CLOSE, 0).ArgFrom(0, fd))
		nsKeep = append(nsKeep, p, b, fd)
	}
	if user {
		write("/proc/self/setgroups", "deny")
		write("/proc/self/uid_map", fmt.Sprintf("%d %d 1\n", os.Geteuid(), os.Geteuid()))
		write("/proc/self/gid_map", fmt.Sprintf("%d %d 1\n", os.Getegid(), os.Getegid()))
	}
	root := []byte("/\x00")
	nsKeep = append(nsKeep, root)
	return append(cs, RawCall(StepNamespace, syscall.SYS_MOUNT, 0, uintptr(unsafe.Pointer(&root[0])), 0, syscall.MS_REC|syscall.MS_PRIVATE, 0))
}

// nsKeep holds what nsCalls' pointers point to for the test binary's life.
var nsKeep []any

// pidnsAttr puts a in its own pid namespace with a fresh /proc.
func pidnsAttr(a *Attr, user bool) {
	a.Calls = append(nsCalls(user), a.Calls...)
	a.PIDNamespace, a.MountProc = true, true
}

// startNS starts path with args in a pid namespace, output on out.
func startNS(t *testing.T, out *os.File, path string, args ...string) Proc {
	t.Helper()
	dn := devNull(t).Fd()
	o := dn
	if out != nil {
		o = out.Fd()
	}
	a := &Attr{Path: path, Args: append([]string{filepath.Base(path)}, args...),
		Env: []string{"PATH=/usr/bin:/bin"}, Files: []uintptr{dn, o, os.Stderr.Fd()}}
	pidnsAttr(a, false)
	pr, err := StartProc(a)
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// noChildren checks the test process has no child left, zombie or not.
func noChildren(t *testing.T) {
	t.Helper()
	if pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); !errors.Is(err, syscall.ECHILD) {
		t.Errorf("a child is left: wait4 = %d, %v", pid, err)
	}
}

// TestPIDNamespace: the target is pid 2 of its namespace and its /proc
// shows only pid 1 and itself; Start refuses CLONE_NEWPID.
func TestPIDNamespace(t *testing.T) {
	flags := []bool{false}
	if os.Geteuid() == 0 {
		flags = append(flags, true) // root in a user namespace too
	}
	type variant struct {
		f     bool // a user namespace even for root
		plain bool // forcePlainFork
	}
	var vs []variant
	for _, f := range flags {
		vs = append(vs, variant{f, false})
	}
	vs = append(vs, variant{false, true})
	for _, v := range vs {
		f := v.f
		fds := countFDs(t)
		t.Run(fmt.Sprintf("user=%v plain=%v", f, v.plain), func(t *testing.T) {
			forcePlainFork = v.plain
			defer func() { forcePlainFork = false }()
			// At StepPID, after the mount, the target's calls see the new
			// /proc: itself as 2, no 3 (the hook for a Landlock rule on it).
			proc2, proc3 := []byte("/proc/2\x00"), []byte("/proc/3\x00")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			a := helperAttr(t, w, filepath.Join(t.TempDir(), "ran"))
			pidnsAttr(a, f)
			a.Calls = append(a.Calls,
				RawCallExpect(StepPID, 0, 0, syscall.SYS_FACCESSAT, atFDCWD, uintptr(unsafe.Pointer(&proc2[0])), 0),
				RawCallExpect(StepPID, 0, syscall.ENOENT, syscall.SYS_FACCESSAT, atFDCWD, uintptr(unsafe.Pointer(&proc3[0])), 0))
			pr, err := StartProc(a)
			runtime.KeepAlive(proc2)
			runtime.KeepAlive(proc3)
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(r)
			ws, err := pr.Wait()
			if err != nil || ws != 0 {
				t.Fatalf("status %#x, %v; output %q", ws, err, out)
			}
			var rep report
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatalf("%q: %v", out, err)
			}
			if rep.Pid != 2 || pr.Init <= 0 || pr.Pid <= 0 || pr.Pid == pr.Init {
				t.Errorf("target sees pid %d; Proc %+v", rep.Pid, pr)
			}
			if diff := cmp.Diff([]int{1, 2}, rep.Procs); diff != "" {
				t.Errorf("/proc in the run (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int{0, 1, 2}, rep.FDs); diff != "" {
				t.Errorf("target descriptors (-want +got):\n%s", diff)
			}
			if rep.Sid != 2 {
				t.Errorf("target's session %d, want its own (2)", rep.Sid)
			}
			noChildren(t)
		})
		if n := countFDs(t); n != fds {
			t.Errorf("the test process holds %d descriptors, %d before the run", n, fds)
		}
	}
	if _, err := Start(&Attr{Path: truePath, Args: []string{"true"}, Files: []uintptr{0, 1, 2}, PIDNamespace: true}); !errors.Is(err, ErrInvalidAttr) {
		t.Errorf("Start with PIDNamespace = %v", err)
	}
	if _, err := StartProc(&Attr{Path: truePath, Args: []string{"true"}, Files: []uintptr{0, 1, 2}, MountProc: true}); !errors.Is(err, ErrInvalidAttr) {
		t.Errorf("MountProc without PIDNamespace = %v", err)
	}
	// Without a mount namespace the child refuses to mount over the
	// caller's /proc.
	_, err := StartProc(&Attr{Path: truePath, Args: []string{"true"}, Files: []uintptr{0, 1, 2}, PIDNamespace: true, MountProc: true})
	// (Not root: the pid namespace itself is refused, EPERM.)
	if se, ok := errors.AsType[*StepError](err); !ok || se.Step != StepPID || os.Geteuid() == 0 && se.Err != syscall.EINVAL {
		t.Errorf("MountProc in the caller's mount namespace = %v, want StepPID EINVAL", err)
	}
	noChildren(t)
}

// TestDaemonEndsWithRun: a double-forked sleep outlives a plain run (the
// canary) but ends with the target of a pid-namespace run.
func TestDaemonEndsWithRun(t *testing.T) {
	// The target exits 3 once the daemon's sleep shows in its /proc.
	script := `(sleep "$0" </dev/null >/dev/null 2>&1 &)
	while :; do
		for f in /proc/[0-9]*/cmdline; do
			case "$({ tr '\0' ' ' <"$f"; } 2>/dev/null)" in "sleep $0 ") exit 3;; esac
		done
	done`
	m := testenv.SleepMarker()
	pid, err := Start(&Attr{Path: "/bin/sh", Args: []string{"sh", "-c", script, m}, Files: []uintptr{0, 1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if ws, _ := Wait(pid); ws.ExitStatus() != 3 {
		t.Fatalf("plain run: status %#x", ws)
	}
	if left := testenv.MarkedSleeps(m); len(left) == 0 {
		t.Error("canary: the daemon of a plain run did not survive it")
	} else {
		testenv.KillAll(left)
	}

	m = testenv.SleepMarker()
	pr := startNS(t, nil, "/bin/sh", "-c", script, m)
	ws, err := pr.Wait()
	if err != nil || ws.ExitStatus() != 3 {
		t.Fatalf("target status %#x, %v; want exit 3", ws, err)
	}
	// The namespace is gone once pid 1 is reaped: nothing to wait for.
	if left := testenv.MarkedSleeps(m); len(left) != 0 {
		testenv.KillAll(left)
		t.Errorf("the daemon outlived the run: %v", left)
	}
}

// TestStepFailsAfterFork: a step the target runs after the pid-1 fork is
// reported by name, as is one at StepPID; nothing of the run is left.
func TestStepFailsAfterFork(t *testing.T) {
	for _, s := range []Step{StepPID, StepApply, StepConsume, StepCloexec} {
		t.Run(s.String(), func(t *testing.T) {
			_, err := spawnHelper(t, func(a *Attr) {
				pidnsAttr(a, false)
				a.Calls = append(a.Calls, failingCall(t, s))
			})
			wantStepError(t, err, s, failingErrno)
			noChildren(t)
		})
	}
	t.Run("exec", func(t *testing.T) {
		_, err := spawnHelper(t, func(a *Attr) { pidnsAttr(a, false); a.Path = "/nonexistent-procage" })
		wantStepError(t, err, StepExec, syscall.ENOENT)
		noChildren(t)
	})
}

// TestTargetSharesMemory: where the fork is vfork (linux/amd64), the pid
// namespace's target is a vfork child of the first child, so it copies no
// page tables: a word it stores at StepPID (its pid there, 2) is in the
// caller's memory after Start. A plain fork's target has its own copy,
// and the caller's word stays 0.
func TestTargetSharesMemory(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("plain=%v", plain), func(t *testing.T) {
			forcePlainFork = plain
			defer func() { forcePlainFork = false }()
			var slot uintptr
			a := trueAttr(t)
			pidnsAttr(a, false)
			a.Calls = append(a.Calls, RawCall(StepPID, syscall.SYS_GETPID).StoreResult(&slot))
			pr, err := StartProc(a)
			if err != nil {
				t.Fatal(err)
			}
			if ws, err := pr.Wait(); err != nil || ws != 0 {
				t.Fatalf("true: status %#x, %v", ws, err)
			}
			want := uintptr(2)
			if plain || !vforkSupported {
				want = 0
			}
			if slot != want {
				t.Errorf("the caller's word after the target's getpid: %d, want %d", slot, want)
			}
			noChildren(t)
		})
	}
}

// TestSignals: SIGTERM to the target ends it with SIGTERM's status (the
// caller waits for the target itself); a signal to pid 1 is forwarded to
// the target; SIGKILL to pid 1 ends the whole run.
func TestSignals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		toInit bool
		sig    syscall.Signal
		want   syscall.Signal
	}{
		{"SIGTERM to the target", false, syscall.SIGTERM, syscall.SIGTERM},
		{"SIGTERM to pid 1 is forwarded", true, syscall.SIGTERM, syscall.SIGTERM},
		{"SIGUSR2 to pid 1 is forwarded", true, syscall.SIGUSR2, syscall.SIGUSR2},
		{"SIGKILL to pid 1 ends the run", true, syscall.SIGKILL, syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testenv.SleepMarker()
			pr := startNS(t, nil, "/bin/sleep", m)
			time.Sleep(50 * time.Millisecond) // let pid 1 reach its loop
			to := pr.Pid
			if tc.toInit {
				to = pr.Init
			}
			if err := syscall.Kill(to, tc.sig); err != nil {
				t.Fatal(err)
			}
			ws, err := pr.Wait()
			if err != nil || !ws.Signaled() || ws.Signal() != tc.want {
				t.Errorf("target status %#x (%v), %v; want killed by %v", ws, ws.Signal(), err, tc.want)
			}
			if left := testenv.MarkedSleeps(m); len(left) != 0 {
				testenv.KillAll(left)
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

const callerEnv = "PROCAGE_FORKEXEC_CALLER"

func init() {
	testMainHooks = append(testMainHooks, func() {
		if mode := os.Getenv(callerEnv); mode != "" {
			os.Exit(runCaller(mode))
		}
	})
}

// runCaller is the re-executed test binary acting as a caller: it starts
// "sh -c 'sleep M & sleep M'" (in a pid namespace unless mode is
// "plain"), says "started" on stdout, and waits to be killed.
func runCaller(mode string) int {
	m := os.Getenv(markerEnv)
	attr := &Attr{Path: "/bin/sh", Args: []string{"sh", "-c", `sleep "$0" & sleep "$0"`, m},
		Env: []string{"PATH=/usr/bin:/bin"}, Files: []uintptr{0, 2, 2}}
	if mode != "plain" {
		pidnsAttr(attr, false)
	}
	if _, err := StartProc(attr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 5
	}
	// Both sleeps running (sh forks one, then execs the other or forks).
	for len(testenv.MarkedSleeps(m)) < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("started")
	select {}
}

// TestCallerKilled: SIGKILL of the caller leaves a plain run's processes
// behind (the canary) and none of a pid-namespace run's.
func TestCallerKilled(t *testing.T) {
	for _, mode := range []string{"plain", "pidns"} {
		t.Run(mode, func(t *testing.T) {
			m := testenv.SleepMarker()
			cmd := exec.Command(testExe(t), "-test.run=^$")
			cmd.Env = append(os.Environ(), callerEnv+"="+mode, markerEnv+"="+m)
			cmd.Stderr = os.Stderr
			d := 2 * time.Second
			if mode == "plain" {
				d = 300 * time.Millisecond // they stay: no need to wait long
			}
			running, left := testenv.KillCaller(t, cmd, m, d)
			switch {
			case mode == "plain" && len(left) == 0:
				t.Error("canary: a plain run's processes did not outlive the caller")
			case mode == "pidns" && len(left) != 0:
				t.Errorf("left behind by the killed caller: %v (of %v)", left, running)
			}
			t.Logf("running before the kill: %v; left after: %v", running, slices.Clip(left))
		})
	}
}
