package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/internal/testenv"

	"golang.org/x/sys/unix"
)

func openPTY(t *testing.T) (master, slave *os.File) { return testenv.OpenPTY(t) }

// procageCmd is procage itself (this test binary, see TestMain) with args.
func procageCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PROCAGE_TEST_MAIN=1")
	return cmd
}

// TestRunLinuxRestoresTerminal (issue 20): a caged program that turns off
// echo and canonical input on the terminal it was given (stty -echo
// -icanon, or a crashed editor) does not leave the caller's terminal that
// way: procage run restores the termios its standard input had.
func TestRunLinuxRestoresTerminal(t *testing.T) {
	_, slave := openPTY(t)
	before, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if before.Lflag&(unix.ECHO|unix.ICANON) != unix.ECHO|unix.ICANON {
		t.Fatalf("a new terminal has lflag %#x, want ECHO and ICANON set", before.Lflag)
	}
	cmd := procageCmd("run", "--fork", "--", "/bin/sh", "-c", "stty -echo -icanon && stty -a")
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("procage run: %v (stderr %q)", err, errb.String())
	}
	// The caged stty did change the terminal.
	if !strings.Contains(out.String(), "-icanon") || !strings.Contains(out.String(), "-echo ") {
		t.Fatalf("stty -a in the cage printed %q; want -icanon and -echo", out.String())
	}
	after, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if after.Lflag != before.Lflag || after.Iflag != before.Iflag || after.Oflag != before.Oflag || after.Cflag != before.Cflag || after.Cc != before.Cc {
		t.Errorf("after procage run the terminal has lflag %#x, iflag %#x; before it had %#x, %#x (ECHO and ICANON: %v)",
			after.Lflag, after.Iflag, before.Lflag, before.Iflag, after.Lflag&(unix.ECHO|unix.ICANON) == unix.ECHO|unix.ICANON)
	}
}

// groupMembers lists the processes of process group pgid that are not
// zombies, from /proc/<pid>/stat (proc(5): field 3 state, field 5 pgrp).
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	names, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range names {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" || f[2] != strconv.Itoa(pgid) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// TestRunLinuxSignalEndsRun (issue 20): SIGHUP (the terminal closed, an
// ssh connection dropped) and SIGQUIT to procage run end the run's whole
// process tree, as SIGINT and SIGTERM do, before procage exits; without
// this procage died and the run, in its own session, kept running.
// procage exits 128 plus the signal's number, as a shell reports a command
// the signal killed (130 for SIGINT, 143 for SIGTERM).
func TestRunLinuxSignalEndsRun(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			// The shell forks a long sleep and waits: pgid is the shell's
			// pid (the run's process group, made by setsid).
			cmd := procageCmd("run", "--fork", "--", "/bin/sh", "-c", `sleep 600 & echo $$ $!; wait`)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			// A surviving sleep holds stderr open: do not wait for it.
			cmd.WaitDelay = 2 * time.Second
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			line, rerr := bufio.NewReader(stdout).ReadString('\n')
			var shell, sleep int
			if _, err := fmt.Sscan(line, &shell, &sleep); rerr != nil || err != nil {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the run said %q (%v, %v; stderr %q)", line, rerr, err, short(errb.String()))
			}
			t.Cleanup(func() { syscall.Kill(-shell, syscall.SIGKILL) })
			go func() { done <- cmd.Wait() }()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				t.Logf("procage exited: %v; stderr %q", err, short(errb.String()))
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("procage still running 10 s after %v", sig)
			}
			var left []int
			for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				left = groupMembers(t, shell)
				if len(left) == 0 || time.Now().After(end) {
					break
				}
			}
			if len(left) > 0 {
				t.Errorf("after %v to procage, processes %v of the run (group %d; shell %d, sleep %d) are still alive", sig, left, shell, shell, sleep)
			}
			want := fmt.Sprintf("procage run: %s (signal %d) received: the run was ended\n", signalNames[sig], sig)
			if st := cmd.ProcessState; st == nil || st.ExitCode() != 128+int(sig) || errb.String() != want {
				t.Errorf("procage after %v: %v, stderr %q; want exit status %d, %q", sig, st, short(errb.String()), 128+int(sig), want)
			}
		})
	}
}

// short cuts s (a Go runtime's SIGQUIT dump) for a test log.
func short(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// TestRunLinuxTimeoutEndsRun (issue 24): --timeout ends the run's whole
// process tree, as a signal to procage does, and procage exits 124 as
// timeout(1) does, naming the timeout.
func TestRunLinuxTimeoutEndsRun(t *testing.T) {
	start := time.Now()
	code, out, errs := runCLI(t, "run", "--fork", "--timeout", "500ms", "--", "/bin/sh", "-c", `sleep 600 & echo $$ $!; wait`)
	var shell, sleep int
	if _, err := fmt.Sscan(out, &shell, &sleep); err != nil {
		t.Fatalf("the run said %q (%v); stderr %q", out, err, errs)
	}
	t.Cleanup(func() { syscall.Kill(-shell, syscall.SIGKILL) })
	if want := "procage run: timed out after 500ms (--timeout): the run was ended\n"; code != exitTimedOut || errs != want {
		t.Errorf("exit %d, stderr %q; want 124, %q", code, errs, want)
	}
	if d := time.Since(start); d < 500*time.Millisecond || d > 20*time.Second {
		t.Errorf("the run took %v with --timeout 500ms", d)
	}
	if left := groupMembers(t, shell); len(left) > 0 {
		t.Errorf("after --timeout, processes %v of the run (group %d; sleep %d) are still alive", left, shell, sleep)
	}
}
