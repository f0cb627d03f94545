package cage_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// TestPIDNamespaceRun: with the per-run pid namespace on (T1's run
// lifetime, behind cage.SetPIDNamespace until T1 turns it on), a caged
// forking run is pid 2 of its own namespace, a daemon it leaves ends with
// it (without the namespace the kill rounds of the run's process group end
// it too: lifecycle tests), and a SIGTERM to Cmd.Process ends the target
// with os/exec's status for a signal.
func TestPIDNamespaceRun(t *testing.T) {
	if err := cage.Probe().Err(); err != nil {
		testenv.Skip(t, testenv.ReasonCannotCage, err.Error())
	}
	newCage := func(t *testing.T) *cage.Cage {
		c, err := cage.New(mustPolicy(t, profile.Fork()), cage.WithHome(t.TempDir()))
		if err != nil {
			skipIfTooOld(t, err)
			t.Fatal(err)
		}
		return c
	}
	// The daemon's pid, as the caller's /proc names it, is found by a
	// marker in its argv.
	daemon := func(t *testing.T, c *cage.Cage) (pid string, left bool) {
		m := strconv.Itoa(800000000 + int(time.Now().UnixNano()%90000000))
		out, err := c.Command(t.Context(), "/bin/sh", "-c", `(sleep "$0" </dev/null >/dev/null 2>&1 &); sleep 0.2; echo $$`, m).Output()
		if err != nil {
			t.Fatalf("Output: %v", err)
		}
		found := false
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err == nil && strings.Contains(string(b), "sleep\x00"+m) {
				found = true
				if p, err := strconv.Atoi(e.Name()); err == nil {
					syscall.Kill(p, syscall.SIGKILL)
				}
			}
		}
		return strings.TrimSpace(string(out)), found
	}
	t.Run("pidns", func(t *testing.T) {
		defer cage.SetPIDNamespace(true)()
		c := newCage(t)
		pid, left := daemon(t, c)
		if pid != "2" {
			t.Errorf("the run's shell is pid %q, want 2", pid)
		}
		if left {
			t.Error("the run's daemon outlived it")
		}

		cmd := c.Command(t.Context(), "/bin/sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != -1 || ee.String() != "signal: terminated" {
			t.Errorf("Wait = %v, want os/exec's ExitError for SIGTERM", err)
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Errorf("ProcessState %v, want killed by SIGTERM", cmd.ProcessState)
		}
		if pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); !errors.Is(err, syscall.ECHILD) {
			t.Errorf("a child is left unreaped: %d, %v", pid, err)
		}
	})
}

const callerEnv = "PROCAGE_CAGE_CALLER"

// A re-executed test binary with callerEnv set is a caller: it starts a
// caged "sh -c 'sleep M & sleep M'" (in a pid namespace if the variable
// says "pidns"), says "started" once both sleeps run, and waits to be
// killed.
func init() {
	mode := os.Getenv(callerEnv)
	if mode == "" {
		return
	}
	m := os.Getenv(callerEnv + "_MARKER")
	if mode == "pidns" {
		cage.SetPIDNamespace(true)
	}
	home, err := os.MkdirTemp("", "procage-caller-")
	if err == nil {
		defer os.RemoveAll(home)
	}
	p, err := profile.New(profile.BaseV1, profile.Fork())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(5)
	}
	c, err := cage.New(p, cage.WithHome(home))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(5)
	}
	cmd := c.Command(context.Background(), "/bin/sh", "-c", `sleep "$0" & sleep "$0"`, m)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(5)
	}
	for len(markedSleeps(m)) < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("started")
	select {}
}

// markedSleeps lists the processes whose argv is "sleep m".
func markedSleeps(m string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && string(b) == "sleep\x00"+m+"\x00" {
			if p, err := strconv.Atoi(e.Name()); err == nil {
				pids = append(pids, p)
			}
		}
	}
	return pids
}

// TestPIDNamespaceCallerKilled: SIGKILL of the caller leaves a caged run
// behind without the pid namespace (the canary: the issue's "a caged run
// outlives a SIGKILLed caller") and nothing of it with one.
func TestPIDNamespaceCallerKilled(t *testing.T) {
	if err := cage.Probe().Err(); err != nil {
		testenv.Skip(t, testenv.ReasonCannotCage, err.Error())
	}
	if _, err := cage.New(mustPolicy(t, profile.Fork()), cage.WithHome(t.TempDir())); err != nil {
		skipIfTooOld(t, err)
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"plain", "pidns"} {
		t.Run(mode, func(t *testing.T) {
			m := strconv.Itoa(700000000 + int(time.Now().UnixNano()%90000000))
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), callerEnv+"="+mode, callerEnv+"_MARKER="+m)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			kill := func(pids []int) {
				for _, p := range pids {
					syscall.Kill(p, syscall.SIGKILL)
				}
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if strings.TrimSpace(line) != "started" {
				cmd.Process.Kill()
				cmd.Wait()
				kill(markedSleeps(m))
				t.Fatalf("caller said %q, %v", line, err)
			}
			cmd.Process.Kill()
			cmd.Wait()
			deadline := time.Now().Add(2 * time.Second)
			if mode == "plain" {
				deadline = time.Now().Add(300 * time.Millisecond) // they stay
			}
			left := markedSleeps(m)
			for len(left) > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				left = markedSleeps(m)
			}
			kill(left)
			switch {
			case mode == "plain" && len(left) == 0:
				t.Error("canary: the run did not outlive its SIGKILLed caller")
			case mode == "pidns" && len(left) != 0:
				t.Errorf("the run outlived its SIGKILLed caller: %v", left)
			}
		})
	}
}
