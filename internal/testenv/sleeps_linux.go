package testenv

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SleepMarker returns an argument for sleep that names one test's
// processes, so that what a run leaves behind can be found in /proc. The
// clock and this process's pid go into it: two test binaries running at
// once do not share one.
func SleepMarker() string {
	n := uint64(time.Now().UnixNano()) ^ uint64(os.Getpid())<<24
	return strconv.Itoa(100000000 + int(n%800000000))
}

// MarkedSleeps lists the processes whose command line is sleep (by any
// path) with the argument m.
func MarkedSleeps(m string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte("sleep\x00"+m+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// WaitGone waits up to d for the marked sleeps to end and returns those
// still there.
func WaitGone(m string, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		left := MarkedSleeps(m)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// KillAll sends SIGKILL to each of pids.
func KillAll(pids []int) {
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// StartCaller starts cmd, a re-executed test binary acting as a caller
// whose run's sleeps carry marker m, and waits for the caller to print
// "started" on its stdout. Anything else fails the test, after the caller
// and the marked sleeps are killed.
func StartCaller(tb testing.TB, cmd *exec.Cmd, m string) {
	tb.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "started" {
		cmd.Process.Kill()
		cmd.Wait()
		KillAll(MarkedSleeps(m))
		tb.Fatalf("caller said %q, %v", line, err)
	}
}

// KillCaller starts cmd as [StartCaller] does, SIGKILLs the caller once
// it has started, and waits up to d for the marked sleeps to end. It
// returns the marked sleeps running before the kill and those left after
// d, which it has killed.
func KillCaller(tb testing.TB, cmd *exec.Cmd, m string, d time.Duration) (running, left []int) {
	tb.Helper()
	StartCaller(tb, cmd, m)
	running = MarkedSleeps(m)
	cmd.Process.Kill()
	cmd.Wait()
	left = WaitGone(m, d)
	KillAll(left)
	return running, left
}
