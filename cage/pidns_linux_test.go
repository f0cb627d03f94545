package cage_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// The run's lifetime and private mounts at tier T1 (its own pid namespace,
// /proc, /tmp and /dev/shm), each first shown open at T2 (the canary).

// requireT1Here skips (by the named reasons) where this host gives no T1.
func requireT1Here(t *testing.T) {
	t.Helper()
	if err := cage.Probe().Err(); err != nil {
		testenv.Skip(t, testenv.ReasonCannotCage, err.Error())
	}
	testenv.RequireUserNamespace(t)
	if r := cage.Probe(); r.Tier != "T1" {
		t.Fatalf("tier %s here: %v", r.Tier, r.T1)
	}
}

func tierCage(t *testing.T, tier cage.LinuxTier, opts []profile.Option, copts ...cage.Option) *cage.Cage {
	t.Helper()
	c, err := cage.New(mustPolicy(t, opts...), append([]cage.Option{cage.WithHome(t.TempDir()), cage.WithLinuxTier(tier)}, copts...)...)
	if err != nil {
		skipIfTooOld(t, err)
		t.Fatal(err)
	}
	return c
}

var tiers = []cage.LinuxTier{cage.TierT2, cage.TierT1}

// TestT1ProcPrivate: with /proc granted, a T2 run sees the caller's
// process (the canary); a T1 run sees only its own, pid 1 and itself.
func TestT1ProcPrivate(t *testing.T) {
	requireT1Here(t)
	me := strconv.Itoa(os.Getpid())
	for _, tier := range tiers {
		t.Run(tier.String(), func(t *testing.T) {
			c := tierCage(t, tier, []profile.Option{profile.Fork(), profile.Read("/proc")})
			out, err := c.Command(t.Context(), "/bin/sh", "-c", `cd /proc && for d in [0-9]*; do echo $d; done; echo self=$$`).Output()
			if err != nil {
				t.Fatalf("Output: %v (%q)", err, out)
			}
			pids := strings.Fields(string(out))
			seesMe := false
			for _, p := range pids {
				seesMe = seesMe || p == me
			}
			switch tier {
			case cage.TierT2:
				if !seesMe {
					t.Errorf("canary: a T2 run with /proc does not see the caller (pid %s): %q", me, pids)
				}
			case cage.TierT1:
				// pid 1, the shell (2) and its listing subshell at most.
				if seesMe && me != "1" && me != "2" || len(pids) > 4 || !strings.Contains(string(out), "self=2") {
					t.Errorf("a T1 run's /proc shows %q, want only the run's", pids)
				}
			}
		})
	}
	// Without a grant /proc stays closed at T1.
	c := tierCage(t, cage.TierT1, []profile.Option{profile.Fork()})
	if out, err := c.Command(t.Context(), "/bin/cat", "/proc/self/status").CombinedOutput(); err == nil {
		t.Errorf("a T1 run without a /proc grant read /proc/self/status: %q", out)
	}
}

// outputAtRoot runs sh -c script in c from / and returns its combined
// output. Not the package directory: in a clone under /tmp the private
// /tmp would cover it, so the cage leaves /tmp the host's.
func outputAtRoot(t *testing.T, c *cage.Cage, script string) string {
	t.Helper()
	cmd := c.Command(t.Context(), "/bin/sh", "-c", script)
	cmd.Dir = "/"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("run: %v (%q)", err, out)
	}
	return string(out)
}

// TestT1DevShmPrivate: with a private temporary directory, a file the host
// keeps in /dev/shm is visible to a T2 run granted /dev/shm (the canary)
// and not at T1, where /dev/shm and /tmp are the run's own and writable;
// TMPDIR still works; Python's multiprocessing.Lock works if python3 is
// here.
func TestT1DevShmPrivate(t *testing.T) {
	requireT1Here(t)
	host, err := os.CreateTemp("/dev/shm", "procage-host-")
	if err != nil {
		t.Fatalf("a file in the host's /dev/shm: %v", err)
	}
	host.Close()
	defer os.Remove(host.Name())
	name := filepath.Base(host.Name())
	for _, tier := range tiers {
		t.Run(tier.String(), func(t *testing.T) {
			c := tierCage(t, tier, []profile.Option{profile.Fork(), profile.Read("/dev/shm")}, cage.WithPrivateTemp())
			script := `ls /dev/shm/` + name + ` >/dev/null 2>&1 && echo host-visible; echo x > /dev/shm/mine && echo shm-writable; echo y > /tmp/mine && echo tmp-writable; echo z > "$TMPDIR/f" && echo tmpdir-writable; true`
			got := outputAtRoot(t, c, script)
			switch tier {
			case cage.TierT2:
				if !strings.Contains(got, "host-visible") {
					t.Errorf("canary: a T2 run does not see the host's /dev/shm file: %q", got)
				}
				os.Remove("/dev/shm/mine")
			case cage.TierT1:
				for _, w := range []string{"shm-writable", "tmp-writable", "tmpdir-writable"} {
					if !strings.Contains(got, w) {
						t.Errorf("T1: %s missing: %q", w, got)
					}
				}
				if strings.Contains(got, "host-visible") {
					t.Errorf("T1: the host's /dev/shm file is visible: %q", got)
				}
				if _, err := os.Stat("/dev/shm/mine"); err == nil {
					os.Remove("/dev/shm/mine")
					t.Error("T1: the run's /dev/shm file landed in the host's /dev/shm")
				}
			}
		})
	}
	py := "/usr/bin/python3" // the system's, under Base V1's exec trees
	if _, err := os.Stat(py); err != nil {
		return
	}
	c := tierCage(t, cage.TierT1, []profile.Option{profile.Fork()}, cage.WithPrivateTemp())
	out, err := c.Command(t.Context(), py, "-c", "import multiprocessing; l = multiprocessing.Lock(); l.acquire(); l.release(); print('lock ok')").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "lock ok") {
		t.Errorf("T1: multiprocessing.Lock: %v (%q)", err, out)
	}
}

// TestT1PrivateTempDeeper: a TMPDIR deeper than /tmp's own entries
// (pam_tmpdir's /tmp/user/UID; the kernel-matrix guest's /tmp/nobody) still
// gets a T1 run with a private /tmp: the run's directory is kept at its
// path, its parents made in the run's own tmpfs, and nothing the run
// writes in /tmp, those parents included, reaches the host's.
func TestT1PrivateTempDeeper(t *testing.T) {
	requireT1Here(t)
	deep := filepath.Join(t.TempDir(), "user", "1000")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", deep)
	host, err := os.CreateTemp("/tmp", "procage-host-")
	if err != nil {
		t.Fatal(err)
	}
	host.Close()
	defer os.Remove(host.Name())
	c := tierCage(t, cage.TierT1, []profile.Option{profile.Fork()}, cage.WithPrivateTemp())
	script := `case "$TMPDIR" in ` + deep + `/procage-run-*) echo tmpdir-deep;; esac
echo z > "$TMPDIR/f" && echo tmpdir-writable
echo y > "$(dirname "$TMPDIR")/beside" && echo parent-writable
ls ` + host.Name() + ` >/dev/null 2>&1 && echo host-visible; true`
	got := outputAtRoot(t, c, script)
	for _, w := range []string{"tmpdir-deep", "tmpdir-writable", "parent-writable"} {
		if !strings.Contains(got, w) {
			t.Errorf("%s missing: %q", w, got)
		}
	}
	if strings.Contains(got, "host-visible") {
		t.Errorf("the host's /tmp file is visible: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(deep, "beside")); err == nil {
		t.Errorf("a file the run wrote beside its TMPDIR landed in the host's %s", deep)
	}
}

// TestT1RunLifetime: at T1 a caged forking run's shell is pid 2 of its own
// namespace, a double-forked daemon ends with the run, and SIGTERM (by
// Cmd.Process.Signal or a cancelled context) ends the target with
// os/exec's status. At T2 the shell has the caller's pid numbering.
func TestT1RunLifetime(t *testing.T) {
	requireT1Here(t)
	// The daemon's pid, as the caller's /proc names it, is found by a
	// marker in its argv.
	daemon := func(t *testing.T, c *cage.Cage) (pid string, left bool) {
		m := strconv.Itoa(800000000 + int(time.Now().UnixNano()%90000000))
		out, err := c.Command(t.Context(), "/bin/sh", "-c", `(sleep "$0" </dev/null >/dev/null 2>&1 &); sleep 0.2; echo $$`, m).Output()
		if err != nil {
			t.Fatalf("Output: %v", err)
		}
		pids := testenv.MarkedSleeps(m)
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		return strings.TrimSpace(string(out)), len(pids) > 0
	}
	for _, tier := range tiers {
		t.Run(tier.String(), func(t *testing.T) {
			c := tierCage(t, tier, []profile.Option{profile.Fork()})
			pid, left := daemon(t, c)
			if tier == cage.TierT2 && pid == "2" || tier == cage.TierT1 && pid != "2" {
				t.Errorf("the run's shell is pid %q at %s", pid, tier)
			}
			if left {
				t.Error("the run's daemon outlived it")
			}
			// SIGTERM by Process.Signal, then by context cancel.
			for _, how := range []string{"signal", "cancel"} {
				ctx, cancel := context.WithCancel(t.Context())
				cmd := c.Command(ctx, "/bin/sleep", "60")
				if how == "cancel" {
					cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(50 * time.Millisecond)
				if how == "signal" {
					if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
						t.Fatal(err)
					}
				} else {
					cancel()
				}
				err := cmd.Wait()
				cancel()
				// os/exec's: the context's error once it cancelled the run.
				var ee *exec.ExitError
				if how == "signal" && (!errors.As(err, &ee) || ee.ExitCode() != -1 || ee.String() != "signal: terminated") ||
					how == "cancel" && !errors.Is(err, context.Canceled) {
					t.Errorf("%s: Wait = %v, want os/exec's error for SIGTERM", how, err)
				}
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
					t.Errorf("%s: ProcessState %v, want killed by SIGTERM", how, cmd.ProcessState)
				}
			}
			// Exit status as os/exec's.
			err := c.Command(t.Context(), "/bin/sh", "-c", "exit 7").Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 7 {
				t.Errorf("exit 7: %v", err)
			}
			if pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); !errors.Is(err, syscall.ECHILD) {
				t.Errorf("a child is left unreaped: %d, %v", pid, err)
			}
		})
	}
}

const callerEnv = "PROCAGE_CAGE_CALLER"

// A re-executed test binary with callerEnv set is a caller: it starts a
// caged "sh -c 'sleep M & sleep M'" at the tier the variable names, says
// "started" once both sleeps run, and waits to be killed.
func init() {
	mode := os.Getenv(callerEnv)
	if mode == "" {
		return
	}
	m := os.Getenv(callerEnv + "_MARKER")
	tier := cage.TierT2
	if mode == "T1" {
		tier = cage.TierT1
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
	c, err := cage.New(p, cage.WithHome(home), cage.WithLinuxTier(tier))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(5)
	}
	cmd := c.Command(context.Background(), "/bin/sh", "-c", `sleep "$0" & sleep "$0"`, m)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(5)
	}
	for len(testenv.MarkedSleeps(m)) < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("started")
	select {}
}

// TestT1CallerKilled: SIGKILL of the caller leaves a T2 run behind (the
// canary: the "a caged run outlives a SIGKILLed caller") and
// nothing of a T1 run.
func TestT1CallerKilled(t *testing.T) {
	requireT1Here(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"T2", "T1"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "T2" { // the caller's cage, as it will make it
				_, err := cage.New(mustPolicy(t, profile.Fork()), cage.WithHome(t.TempDir()), cage.WithLinuxTier(cage.TierT2))
				skipIfTooOld(t, err)
			}
			m := testenv.SleepMarker()
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), callerEnv+"="+mode, callerEnv+"_MARKER="+m)
			cmd.Stderr = os.Stderr
			d := 2 * time.Second
			if mode == "T2" {
				d = 300 * time.Millisecond // they stay
			}
			_, left := testenv.KillCaller(t, cmd, m, d)
			switch {
			case mode == "T2" && len(left) == 0:
				t.Error("canary: the T2 run did not outlive its SIGKILLed caller")
			case mode == "T1" && len(left) != 0:
				t.Errorf("the T1 run outlived its SIGKILLed caller: %v", left)
			}
		})
	}
}
