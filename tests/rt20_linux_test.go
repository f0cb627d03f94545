package tests

// Red-team canaries (rt20) against the issue 20 fixes: each fails while
// the escape it names is open.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// TestLinuxEscapeTempSwapChmod: a run whose policy may write the parent of
// its private TMPDIR (the real temporary directory, say /tmp) renames its
// TMPDIR away and puts a symbolic link to an outside tree in its place.
// removeTemp's os.Chmod(dir) and os.OpenRoot(dir) followed that link, so
// procage, outside the cage, chmodded the outside tree's directories to
// 0700 (as root: any directory on the host). Now removal touches only the
// directory it made and reports the swap (the moved directory cannot be
// found; it is the run's own files in a tree it may write).
func TestLinuxEscapeTempSwapChmod(t *testing.T) {
	requireCage(t)
	needPython(t)
	parent := t.TempDir()
	if err := os.Chmod(parent, 0o777|os.ModeSticky); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", parent)
	victim := filepath.Join(t.TempDir(), "victim")
	sub := filepath.Join(victim, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(victim, 0o755)
	c := newCage(t, policy(t, profile.ReadWrite(parent), profile.Waive(profile.TrustHandoff)), cage.WithPrivateTemp(), cage.WithHome(tempHome(t)))
	code := "d = os.environ['TMPDIR']\nos.rename(d, d + '.moved')\nos.symlink('" + victim + "', d)\nprint('swapped')"
	out, _, err := run(t, c, python, "-c", "import os\n"+code)
	if !strings.Contains(out, "swapped") {
		t.Fatalf("the cage could not swap its TMPDIR: %q %v", out, err)
	}
	// The swap is reported, and what is at the path is left alone.
	if !errors.Is(err, cage.ErrTempNotRemoved) {
		t.Errorf("Wait = %v, want ErrTempNotRemoved for the replaced TMPDIR", err)
	}
	for _, p := range []string{victim, sub} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o755 {
			t.Errorf("%s outside the cage is now mode %o (was 755): procage's temp removal followed the cage's link", p, st.Mode().Perm())
		}
	}
}

// TestLinuxEscapeJSONPathMemory: the depth cap (32) bounds how deep a
// policy nests, not how long the locator's field paths get: one long key
// under a field of another type (fork here) and a long array below it
// record one path per element, each as long as the key, before the type
// error is reported. Memory is quadratic in the document's size again:
// 60 KB costs ~400 MB, 300 KB ~10 GB.
func TestLinuxEscapeJSONPathMemory(t *testing.T) {
	key := strings.Repeat("k", 20000)
	in := `{"version":1,"base":"v1","fork":{"` + key + `":[` + strings.TrimSuffix(strings.Repeat("0,", 20000), ",") + `]}}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := profile.ParseJSON(bytes.NewReader([]byte(in)))
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("the policy parsed")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("a %d-byte policy made ParseJSON allocate %d MB (error %.80s)", len(in), alloc>>20, fmt.Sprint(err))
	}
}

// rt20HelperEnv names a helper of this file's tests the re-executed test
// binary runs (before TestMain, so the shared helper table is untouched).
const rt20HelperEnv = "PROCAGE_RT20_HELPER"

func init() {
	switch os.Getenv(rt20HelperEnv) {
	case "shell":
		os.Exit(rt20Shell())
	case "job-cage", "job-plain":
		os.Exit(rt20Job(os.Getenv(rt20HelperEnv) == "job-cage"))
	}
}

// rt20Shell acts as an interactive shell: the session leader with the
// terminal (its stdin) as controlling terminal, in the foreground, which
// starts one background job (its own process group) and ends it later.
func rt20Shell() int {
	job := exec.Command(os.Args[0])
	job.Env = append(os.Environ(), rt20HelperEnv+"="+os.Getenv("RT20_JOB"))
	job.Stdin, job.Stdout, job.Stderr = os.Stdin, os.Stdout, os.Stderr
	job.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := job.Start(); err != nil {
		fmt.Println("job:", err)
		return 1
	}
	time.Sleep(6 * time.Second)
	syscall.Kill(-job.Process.Pid, syscall.SIGKILL)
	job.Wait()
	return 0
}

// rt20Job is the background job: a caged (or, for the control, plain)
// Python that reads a line from the terminal and reports it.
func rt20Job(caged bool) int {
	args := []string{"-c", "import sys\nl = sys.stdin.readline()\nprint('READ:' + l.strip(), flush=True)"}
	var cmd interface {
		Run() error
	}
	if caged {
		pol, err := profile.New(profile.BaseV1)
		if err != nil {
			fmt.Println("policy:", err)
			return 1
		}
		c, err := cage.New(pol, cage.WithHome("/nonexistent-home"))
		if err != nil {
			fmt.Println("new:", err)
			return 1
		}
		cc := c.Command(context.Background(), python, args...)
		cc.Stdin, cc.Stdout, cc.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd = cc
	} else {
		pc := exec.Command(python, args...)
		pc.Stdin, pc.Stdout, pc.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd = pc
	}
	if err := cmd.Run(); err != nil {
		fmt.Println("run:", err)
	}
	return 0
}
