package tests

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

func openPTY(t *testing.T) (master, slave *os.File) { return testenv.OpenPTY(t) }

// TestLinuxTerminalStdio: a spawn whose stdio is a terminal runs and uses
// it (Landlock does not check descriptors opened before the ruleset); it
// used to be refused, the terminal's grant counted as a writable tree
// (trust-handoff). Another terminal stays closed by name.
func TestLinuxTerminalStdio(t *testing.T) {
	requireCage(t)
	master, slave := openPTY(t)
	_, other := openPTY(t)
	// What the terminal shows, read as it comes (the master blocks).
	shown := make(chan string, 64)
	go func() {
		b := make([]byte, 256)
		for {
			n, err := master.Read(b)
			if err != nil {
				close(shown)
				return
			}
			shown <- string(b[:n])
		}
	}()
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := c.Command(ctx, "/bin/dd", "of="+other.Name())
	var errb strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, &errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("Start with a terminal as stdin and stdout: %v", err)
	}
	// dd opens its output before it reads: it fails without input.
	err := cmd.Wait()
	if err == nil || !strings.Contains(errb.String(), "Permission denied") {
		t.Errorf("dd of=%s (another terminal): %v, stderr %q; want Permission denied", other.Name(), err, errb.String())
	}
	cmd = c.Command(ctx, "/bin/sh", "-c", "read x && echo got $x")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, &errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if _, err := master.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("reading and writing the terminal: %v (%q)", err, errb.String())
	}
	var seen string
	for timeout := time.After(10 * time.Second); !strings.Contains(seen, "got line"); {
		select {
		case out, ok := <-shown:
			if !ok {
				t.Fatalf("the terminal closed after showing %q", seen)
			}
			seen += out
		case <-timeout:
			t.Fatalf("the terminal showed %q, not the run's output", seen)
		}
	}
}

// TestLinuxPrivateTempModeZeroDir (issue 20): a run that leaves a
// directory of mode 0 with something in it in its private TMPDIR (chmod 0
// needs no privilege on one's own files) must not make the directory
// outlive the run: RemoveAll cannot list a directory it may not read. Root
// outside the cage removes any mode, and root inside cannot chmod
// (seccomp), so the escape shows only as another user (.ci/run's nobody).
func TestLinuxPrivateTempModeZeroDir(t *testing.T) {
	requireCage(t)
	// A link out of the TMPDIR must not carry the mode changes out.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(outside, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(outside, 0o700) })
	c := newCage(t, policy(t, profile.Fork()), cage.WithPrivateTemp(), cage.WithHome(tempHome(t)))
	o, e, err := run(t, c, "/bin/sh", "-c", `echo "$TMPDIR"; ln -s `+outside+` "$TMPDIR/out" && mkdir -p "$TMPDIR/d/e/f" && ln -s `+outside+` "$TMPDIR/d/e/f/out" && touch "$TMPDIR/d/e/x" && chmod 0 "$TMPDIR/d/e" "$TMPDIR/d" && echo locked`)
	dir := strings.TrimSpace(strings.Split(o, "\n")[0])
	if !strings.Contains(filepath.Base(dir), "procage-run-") {
		t.Fatalf("TMPDIR %q is not a procage run directory (%v, %q)", dir, err, e)
	}
	t.Cleanup(func() { unlock(dir); os.RemoveAll(dir) })
	if !strings.Contains(o, "locked") {
		if os.Geteuid() != 0 {
			t.Fatalf("could not make the mode-0 directories: %v %q", err, e)
		}
		t.Logf("as root the cage cannot chmod (%q): only the removal is checked", strings.TrimSpace(e))
	} else if err != nil {
		t.Fatalf("run: %v (%q)", err, e)
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("the run's TMPDIR %s outlived the run (lstat: %v)", dir, err)
	}
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o500 {
		t.Errorf("the directory a link in the TMPDIR named: %v, %v; want mode 0500, untouched", fi.Mode(), err)
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("a file the link named was removed: %v", err)
	}
}

// unlock makes every directory under dir u+rwx again, for cleanup.
func unlock(dir string) {
	for range 8 {
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if d != nil && d.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
	}
}

// TestLinuxPrivateTempRemovalReported: a private TMPDIR that cannot be
// removed is reported by Wait (cage.ErrTempNotRemoved)
// (cage.ErrTempNotRemoved), next to the run's own exit status. Root, from
// outside the cage, mounts a file system in it while the run waits
// (rmdir of a mount point is EBUSY); the cage itself cannot mount.
func TestLinuxPrivateTempRemovalReported(t *testing.T) {
	requireCage(t)
	testenv.RequireRoot(t, "mounting in the run's TMPDIR")
	c := newCage(t, policy(t, profile.Fork()), cage.WithPrivateTemp(), cage.WithHome(tempHome(t)))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := c.Command(ctx, "/bin/sh", "-c", `mkdir "$TMPDIR/m" && echo "$TMPDIR" && read x; exit 3`)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 512)
	n, _ := out.Read(b)
	dir := strings.TrimSpace(string(b[:n]))
	if !strings.Contains(filepath.Base(dir), "procage-run-") {
		in.Close()
		cmd.Wait()
		t.Fatalf("TMPDIR %q", dir)
	}
	mnt := filepath.Join(dir, "m")
	if o, err := exec.Command("mount", "-t", "tmpfs", "procage-test", mnt).CombinedOutput(); err != nil {
		in.Close()
		cmd.Wait()
		testenv.Skip(t, testenv.ReasonCannotMount, fmt.Sprintf("%v %s", err, o))
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run(); os.RemoveAll(dir) })
	in.Close()
	err = cmd.Wait()
	var te *fs.PathError
	if !errors.Is(err, cage.ErrTempNotRemoved) || !errors.As(err, &te) || te.Path != dir || !errors.Is(err, syscall.EBUSY) {
		t.Errorf("Wait: %v; want ErrTempNotRemoved with an *fs.PathError for %s wrapping EBUSY", err, dir)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("Wait: %v; want the run's exit status 3 too", err)
	}
}

// TestLinuxCoreLimitZero (issue 20): a caged process starts with
// RLIMIT_CORE 0, soft and hard, so it cannot raise it and dump its memory
// (to a core file, or through a pipe core_pattern whose helper honours the
// limit: core(5)); the caller's own limit is unchanged.
func TestLinuxCoreLimitZero(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	o, e, err := run(t, c, "/bin/sh", "-c", `ulimit -c; ulimit -H -c; ulimit -S -c 1 2>/dev/null && echo raised-soft; ulimit -H -c unlimited 2>/dev/null && echo raised-hard; true`)
	if err != nil {
		t.Fatalf("%v (%q)", err, e)
	}
	if got := strings.Fields(o); len(got) != 2 || got[0] != "0" || got[1] != "0" {
		t.Errorf("in the cage: soft and hard RLIMIT_CORE and raises %q, want 0 0 and no raise", o)
	}
}

// TestLinuxCoreDumpsOptIn: cage.WithCoreDumps keeps the caller's
// RLIMIT_CORE, and WithRlimits naming RLIMIT_CORE sets it instead of 0.
func TestLinuxCoreDumpsOptIn(t *testing.T) {
	requireCage(t)
	var own syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_CORE, &own); err != nil {
		t.Fatal(err)
	}
	show := `ulimit -c; ulimit -H -c`
	limit := func(v uint64) string {
		if v == unix.RLIM_INFINITY {
			return "unlimited"
		}
		return strconv.FormatUint(v/512, 10) // dash's ulimit -c counts 512-byte blocks
	}
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)), cage.WithCoreDumps())
	o, e, err := run(t, c, "/bin/sh", "-c", show)
	if want := limit(own.Cur) + "\n" + limit(own.Max) + "\n"; err != nil || o != want {
		t.Errorf("WithCoreDumps: %q (%v, %q), want the caller's %q", o, err, e, want)
	}
	max := min(own.Max, 1<<20)
	c = newCage(t, policy(t), cage.WithHome(tempHome(t)), cage.WithRlimits(cage.Rlimit{Resource: unix.RLIMIT_CORE, Cur: 0, Max: max}))
	o, e, err = run(t, c, "/bin/sh", "-c", show)
	if want := "0\n" + limit(max) + "\n"; err != nil || o != want {
		t.Errorf("WithRlimits(RLIMIT_CORE 0, %d): %q (%v, %q), want %q", max, o, err, e, want)
	}
}
