//go:build darwin || linux

package forkexec

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The test binary doubles as the child target (os/exec's exec_test.go
// pattern): with PROCAGE_FORKEXEC_HELPER set it reports what it sees as JSON
// on fd 1 and exits. With PROCAGE_MARKER set it first creates that file, so
// a test can tell whether the target ran at all.
const (
	helperEnv = "PROCAGE_FORKEXEC_HELPER"
	markerEnv = "PROCAGE_MARKER"
)

type report struct {
	Pid, Sid, Pgid int
	Cwd            string
	Args, Env      []string
	FDs            []int
	Procs          []int // the numeric entries of /proc (Linux)
}

// testMainHooks run first in TestMain: a per-OS test file's re-exec mode.
var testMainHooks []func()

func TestMain(m *testing.M) {
	for _, h := range testMainHooks {
		h()
	}
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper())
	}
	os.Exit(m.Run())
}

func runHelper() int {
	fds, err := listFDs() // first, before anything else opens a descriptor
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if m := os.Getenv(markerEnv); m != "" {
		if err := os.WriteFile(m, nil, 0o600); err != nil {
			return 3
		}
	}
	sid, _ := unix.Getsid(0)
	cwd, _ := os.Getwd()
	r := report{
		Pid: os.Getpid(), Sid: sid, Pgid: syscall.Getpgrp(), Cwd: cwd,
		Args: os.Args, Env: os.Environ(), FDs: fds, Procs: procPids(),
	}
	b, _ := json.Marshal(r)
	if _, err := os.Stdout.Write(b); err != nil {
		return 4
	}
	return 0
}

// fdDir lists the calling process's descriptors on each OS.
var fdDir = map[string]string{"linux": "/proc/self/fd", "darwin": "/dev/fd"}[runtime.GOOS]

// listFDs reads fdDir with raw calls (os.Open would create the netpoller's
// descriptors) and leaves out the directory's own fd.
func listFDs() ([]int, error) {
	d, err := syscall.Open(fdDir, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(d)
	var fds []int
	buf := make([]byte, 8192)
	for {
		n, err := syscall.ReadDirent(d, buf)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		var names []string
		_, _, names = syscall.ParseDirent(buf[:n], -1, names)
		for _, name := range names {
			fd, err := strconv.Atoi(name)
			if err == nil && fd != d {
				fds = append(fds, fd)
			}
		}
	}
	slices.Sort(fds)
	return fds, nil
}

func testExe(tb testing.TB) string {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return exe
}

// helperEnvFor is the helper's environment. GODEBUG=containermaxprocs=0
// stops the helper's own runtime from opening (and keeping) the cgroup CPU
// quota files (Go 1.25+), which would show up as descriptors 3 and 4.
func helperEnvFor(mark string) []string {
	return []string{helperEnv + "=report", markerEnv + "=" + mark, "PROCAGE_X=a=b", "GODEBUG=containermaxprocs=0"}
}

// helperAttr returns an Attr that runs the helper with its stdout on w and
// the platform's mandatory sandbox calls; mark is the marker path.
func helperAttr(tb testing.TB, w *os.File, mark string) *Attr {
	tb.Helper()
	return &Attr{
		Path:  testExe(tb),
		Args:  []string{"forkexec-helper", "arg one", ""},
		Env:   helperEnvFor(mark),
		Files: []uintptr{devNull(tb).Fd(), w.Fd(), os.Stderr.Fd()},
		Calls: sandboxCalls(tb),
	}
}

func devNull(tb testing.TB) *os.File {
	tb.Helper()
	f, err := os.Open(os.DevNull)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// runHelper starts the helper with mutate applied to its Attr. On success
// it returns the helper's report and checks it exited 0; on a Start error
// it checks the marker is absent (the target never ran) and returns the
// error.
func spawnHelper(tb testing.TB, mutate func(*Attr)) (report, error) {
	tb.Helper()
	mark := filepath.Join(tb.TempDir(), "ran")
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	attr := helperAttr(tb, w, mark)
	if mutate != nil {
		mutate(attr)
	}
	pr, err := StartProc(attr)
	pid := pr.Pid
	w.Close()
	if err != nil {
		if _, serr := os.Stat(mark); serr == nil {
			tb.Errorf("Start failed (%v) but the target ran", err)
		}
		return report{}, err
	}
	out, rerr := io.ReadAll(r)
	ws, werr := pr.Wait()
	if rerr != nil || werr != nil {
		tb.Fatalf("reading helper: %v; waiting: %v", rerr, werr)
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		tb.Fatalf("helper ended with %#x, output %q", ws, out)
	}
	var rep report
	if err := json.Unmarshal(out, &rep); err != nil {
		tb.Fatalf("helper output %q: %v", out, err)
	}
	if rep.Pid != pid && pr.Init == 0 {
		tb.Errorf("helper pid = %d, Start returned %d", rep.Pid, pid)
	}
	return rep, nil
}

// countFDs counts the test process's open descriptors.
func countFDs(tb testing.TB) int {
	tb.Helper()
	fds, err := listFDs()
	if err != nil {
		tb.Fatal(err)
	}
	return len(fds)
}

// openExtraFDs opens n descriptors without close-on-exec, closed at cleanup.
func openExtraFDs(tb testing.TB, n int) {
	tb.Helper()
	src := devNull(tb)
	for range n {
		fd, err := syscall.Dup(int(src.Fd()))
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { syscall.Close(fd) })
	}
}

// trueAttr runs the OS's true(1) with the mandatory sandbox calls.
func trueAttr(tb testing.TB) *Attr {
	tb.Helper()
	dn := devNull(tb).Fd()
	return &Attr{
		Path:  truePath,
		Args:  []string{"true"},
		Files: []uintptr{dn, dn, dn},
		Calls: sandboxCalls(tb),
	}
}

func runTrue(tb testing.TB, attr *Attr) {
	tb.Helper()
	pid, err := Start(attr)
	if err != nil {
		tb.Fatal(err)
	}
	ws, err := Wait(pid)
	if err != nil || !ws.Exited() || ws.ExitStatus() != 0 {
		tb.Fatalf("true: status %#x, err %v", ws, err)
	}
}

// procPids lists the numeric entries of /proc, or nil without one.
func procPids() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}
