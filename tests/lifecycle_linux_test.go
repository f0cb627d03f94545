package tests

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/cage"
)

// openPTY opens a pseudo-terminal pair (pts(4): /dev/ptmx, TIOCSPTLCK to
// unlock, TIOCGPTN for the slave's number).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

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
