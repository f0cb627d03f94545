//go:build darwin || linux

package forkexec

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ebitengine/purego"
	"github.com/google/go-cmp/cmp"
)

func TestStepString(t *testing.T) {
	var got []string
	for s := StepSession; s < stepEnd; s++ {
		got = append(got, s.String())
	}
	want := []string{"session", "stdio", "chdir", "namespace", "pidns", "rlimit", "apply", "confirm", "consume", "cloexec", "exec"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Step names (-want +got):\n%s", diff)
	}
	if got := Step(99).String(); got != "step(99)" {
		t.Errorf("Step(99) = %q", got)
	}
	e := &StepError{Step: StepApply, Err: syscall.EPERM}
	if got, want := e.Error(), "procage child: apply: "+syscall.EPERM.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestInvalidAttr(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Attr)
	}{
		{"relative path", func(a *Attr) { a.Path = "true" }},
		{"empty args", func(a *Attr) { a.Args = nil }},
		{"NUL in path", func(a *Attr) { a.Path = "/bin/tr\x00ue" }},
		{"NUL in arg", func(a *Attr) { a.Args = []string{"a\x00"} }},
		{"NUL in env", func(a *Attr) { a.Env = []string{"A=\x00"} }},
		{"NUL in dir", func(a *Attr) { a.Dir = "/\x00" }},
		{"two files", func(a *Attr) { a.Files = a.Files[:2] }},
		{"zero Call", func(a *Attr) { a.Calls = append(a.Calls, Call{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := trueAttr(t)
			tc.mutate(a)
			_, err := Start(a)
			if !errors.Is(err, ErrInvalidAttr) {
				t.Errorf("Start = %v, want an error wrapping ErrInvalidAttr", err)
			}
		})
	}
	if _, err := Start(nil); !errors.Is(err, ErrInvalidAttr) {
		t.Errorf("Start(nil) = %v", err)
	}
}

// TestFDHygiene: with 1,000 extra descriptors open without close-on-exec,
// the child holds only 0, 1 and 2, and spawning leaks no descriptor.
func TestFDHygiene(t *testing.T) {
	openExtraFDs(t, 1000)
	rep, err := spawnHelper(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 1, 2}, rep.FDs); diff != "" {
		t.Errorf("child descriptors (-want +got):\n%s", diff)
	}
	a := trueAttr(t)
	before := countFDs(t)
	for range 1000 {
		runTrue(t, a)
	}
	if after := countFDs(t); after != before {
		t.Errorf("parent has %d descriptors after 1,000 spawns, %d before", after, before)
	}
}

// TestStdioShuffle: Files in reverse order, including one equal to its
// index, arrive at 0..n-1 (the shuffle's two passes).
func TestStdioShuffle(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dn := devNull(t).Fd()
	// fd 1 of the child is the pipe; fd 2 is fd 2; fd 3 is the pipe again.
	a := &Attr{
		Path:  "/bin/sh",
		Args:  []string{"sh", "-c", "echo out; echo three >&3"},
		Files: []uintptr{dn, w.Fd(), os.Stderr.Fd(), w.Fd()},
		Calls: sandboxCalls(t),
	}
	pid, err := Start(a)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	if ws, err := Wait(pid); err != nil || ws.ExitStatus() != 0 {
		t.Fatalf("sh: %#x %v", ws, err)
	}
	if got, want := string(out), "out\nthree\n"; got != want {
		t.Errorf("output = %q, want %q", got, want)
	}
}

func TestAttrArrives(t *testing.T) {
	dir := t.TempDir()
	rep, err := spawnHelper(t, func(a *Attr) { a.Dir = dir })
	if err != nil {
		t.Fatal(err)
	}
	a := helperAttr(t, os.Stdout, "")
	if diff := cmp.Diff(a.Args, rep.Args); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	wantEnv := helperEnvFor("")
	gotEnv := rep.Env
	for i := range gotEnv {
		if strings.HasPrefix(gotEnv[i], markerEnv+"=") {
			gotEnv[i] = markerEnv + "="
		}
	}
	if diff := cmp.Diff(wantEnv, gotEnv); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	wantDir, _ := filepath.EvalSymlinks(dir)
	gotDir, _ := filepath.EvalSymlinks(rep.Cwd)
	if gotDir != wantDir {
		t.Errorf("cwd = %q, want %q", gotDir, wantDir)
	}
}

func TestSessionAndProcessGroup(t *testing.T) {
	mySid, _ := getsid(0)
	rep, err := spawnHelper(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sid != rep.Pid || rep.Pgid != rep.Pid {
		t.Errorf("setsid mode: pid %d, sid %d, pgid %d; want a new session led by the child", rep.Pid, rep.Sid, rep.Pgid)
	}
	rep, err = spawnHelper(t, func(a *Attr) { a.ProcessGroup = true })
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pgid != rep.Pid || rep.Sid != mySid {
		t.Errorf("process-group mode: pid %d, sid %d (parent %d), pgid %d; want own group in the parent's session", rep.Pid, rep.Sid, mySid, rep.Pgid)
	}
}

// shLimits runs sh to print its soft and hard limits for the ulimit flag.
func shLimits(t *testing.T, rl []Rlimit, flag string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dn := devNull(t).Fd()
	pid, err := Start(&Attr{
		Path:    "/bin/sh",
		Args:    []string{"sh", "-c", "ulimit -S" + flag + "; ulimit -H" + flag},
		Files:   []uintptr{dn, w.Fd(), os.Stderr.Fd()},
		Rlimits: rl,
		Calls:   sandboxCalls(t),
	})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(r)
	if ws, err := Wait(pid); err != nil || ws.ExitStatus() != 0 {
		t.Fatalf("sh: %#x %v", ws, err)
	}
	return string(out)
}

func limitString(v uint64) string {
	if v == rlimInfinity {
		return "unlimited"
	}
	return fmt.Sprint(v)
}

func TestRlimits(t *testing.T) {
	var nofile syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	t.Run("explicit", func(t *testing.T) {
		got := shLimits(t, []Rlimit{
			{Resource: syscall.RLIMIT_CPU, Cur: 100, Max: 200},
			{Resource: syscall.RLIMIT_NOFILE, Cur: 77, Max: nofile.Max},
		}, "t")
		if want := "100\n200\n"; got != want {
			t.Errorf("cpu limits = %q, want %q", got, want)
		}
		got = shLimits(t, []Rlimit{{Resource: syscall.RLIMIT_NOFILE, Cur: 77, Max: nofile.Max}}, "n")
		if want := "77\n" + limitString(nofile.Max) + "\n"; got != want {
			t.Errorf("nofile limits = %q, want %q", got, want)
		}
	})
	t.Run("nofile restored", func(t *testing.T) {
		if !goRaisedNofile(startNofile) {
			t.Skipf("RLIMIT_NOFILE %+v was not raised by Go at start-up", startNofile)
		}
		got := shLimits(t, nil, "n")
		want := limitString(min(defaultNofile, nofile.Max)) + "\n" + limitString(nofile.Max) + "\n"
		if got != want {
			t.Errorf("inherited nofile = %q, want %q (OS default soft limit)", got, want)
		}
	})
}

// wantStepError checks err is a *StepError for step wrapping want.
func wantStepError(t *testing.T, err error, step Step, want syscall.Errno) {
	t.Helper()
	var se *StepError
	if !errors.As(err, &se) {
		t.Fatalf("Start = %v, want a *StepError", err)
	}
	if se.Step != step || !errors.Is(err, want) {
		t.Errorf("Start = %v (step %v, errno %d), want step %v, errno %v", err, se.Step, se.Err, step, want)
	}
}

// TestEachStepFails makes every step fail in turn through a failing call at
// its position: the target never runs and the error names the step.
func TestEachStepFails(t *testing.T) {
	for s := StepSession; s < stepEnd; s++ {
		t.Run(s.String(), func(t *testing.T) {
			_, err := spawnHelper(t, func(a *Attr) { a.Calls = append(a.Calls, failingCall(t, s)) })
			wantStepError(t, err, s, failingErrno)
		})
	}
}

func TestNaturalStepFailures(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Attr)
		step   Step
		errno  syscall.Errno
	}{
		{"bad fd", func(a *Attr) { a.Files[2] = 1<<20 + 5 }, StepStdio, syscall.EBADF},
		{"missing dir", func(a *Attr) { a.Dir = "/nonexistent/procage" }, StepDir, syscall.ENOENT},
		{"bad rlimit", func(a *Attr) {
			a.Rlimits = []Rlimit{{Resource: syscall.RLIMIT_CPU, Cur: 10, Max: 5}}
		}, StepRlimit, syscall.EINVAL},
		{"missing executable", func(a *Attr) { a.Path = "/nonexistent/procage" }, StepExec, syscall.ENOENT},
		{"not executable", func(a *Attr) { a.Path = notExec }, StepExec, syscall.EACCES},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := spawnHelper(t, tc.mutate)
			wantStepError(t, err, tc.step, tc.errno)
		})
	}
	_, err := spawnHelper(t, func(a *Attr) { a.Path = notExec })
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("exec of a non-executable file: %v does not satisfy errors.Is(err, fs.ErrPermission)", err)
	}
}

// TestConcurrentRuns: two children started together end separately, each
// with its own status.
func TestConcurrentRuns(t *testing.T) {
	dn := devNull(t).Fd()
	start := func(script string) int {
		pid, err := Start(&Attr{
			Path: "/bin/sh", Args: []string{"sh", "-c", script},
			Files: []uintptr{dn, dn, dn}, Calls: sandboxCalls(t),
		})
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	slow := start("sleep 0.3; exit 3")
	fast := start("exit 5")
	t0 := time.Now()
	ws, err := Wait(fast)
	if err != nil || ws.ExitStatus() != 5 {
		t.Errorf("fast child: %#x %v, want exit 5", ws, err)
	}
	if d := time.Since(t0); d > 250*time.Millisecond {
		t.Errorf("fast child took %v: it waited for the slow one", d)
	}
	ws, err = Wait(slow)
	if err != nil || ws.ExitStatus() != 3 {
		t.Errorf("slow child: %#x %v, want exit 3", ws, err)
	}
}

// TestSpawnWhileLoadingLibraries: 100 children spawned from 16 goroutines
// while others dlopen/dlclose in a loop all complete every step.
func TestSpawnWhileLoadingLibraries(t *testing.T) {
	sandboxCalls(t) // any skip happens here, on the test goroutine, not in a worker
	stop := make(chan struct{})
	var loaders sync.WaitGroup
	var loads [2]int
	for i, lib := range dlLibs {
		loaders.Add(1)
		go func() {
			defer loaders.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				h, err := purego.Dlopen(lib, purego.RTLD_NOW|purego.RTLD_GLOBAL)
				if err != nil {
					t.Errorf("Dlopen(%s): %v", lib, err)
					return
				}
				if err := purego.Dlclose(h); err != nil {
					t.Errorf("Dlclose(%s): %v", lib, err)
					return
				}
				loads[i]++
			}
		}()
	}
	const goroutines, perG = 16, 100 / 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	spawned := 0
	for g := range goroutines {
		n := perG
		if g < 100%goroutines {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				rep, err := spawnHelper(t, nil)
				if err != nil {
					t.Error(err)
					return
				}
				if diff := cmp.Diff([]int{0, 1, 2}, rep.FDs); diff != "" {
					t.Errorf("child descriptors (-want +got):\n%s", diff)
				}
				mu.Lock()
				spawned++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	loaders.Wait()
	if spawned != 100 {
		t.Errorf("%d children completed, want 100", spawned)
	}
	if loads[0] == 0 || loads[1] == 0 {
		t.Errorf("library loads during the run: %v; the loaders did not overlap the spawns", loads)
	}
}

// TestNoLeak: 10,000 spawns leave no goroutine or descriptor behind.
func TestNoLeak(t *testing.T) {
	n := 10000
	if testing.Short() || raceEnabled {
		n = 2000
	}
	a := trueAttr(t)
	runTrue(t, a) // warm up lazily created state
	fds, gs := countFDs(t), runtime.NumGoroutine()
	for range n {
		runTrue(t, a)
	}
	if got := countFDs(t); got != fds {
		t.Errorf("%d descriptors after %d spawns, %d before", got, n, fds)
	}
	if got := runtime.NumGoroutine(); got > gs {
		t.Errorf("%d goroutines after %d spawns, %d before", got, n, gs)
	}
}
