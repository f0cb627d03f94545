package cage_test

// The portable run lifecycle, run for real on Linux. Each test runs
// through a fake backend (export_linux_test.go) whose child calls are
// harmless raw calls, and the tests that mean the same under a sandbox
// also run through the host's backend where this host cages (Probe
// passes): pipes, Wait, the context, kill rounds, the environment and
// os/exec parity. The run-end tests (context, daemons, concurrent runs,
// the private temporary directory) run on the fake only: their host runs
// are the spawn tests of tests/ (spawn_unix_test.go), on macOS too. The
// fake variants say nothing about any sandbox: the fake confines nothing.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// fakeCage builds a cage on the host's file system that enforces through
// a fresh fake backend.
func fakeCage(t testing.TB, popts []profile.Option, opts ...cage.Option) (*cage.Cage, *cage.FakeBackend) {
	t.Helper()
	fb := &cage.FakeBackend{}
	c, err := cage.New(mustPolicy(t, popts...), append([]cage.Option{
		cage.WithFakeBackend(fb), cage.WithHome(t.TempDir()),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, fb
}

// lcage is a cage for one lifecycle test on one backend.
type lcage struct {
	*cage.Cage
	fb  *cage.FakeBackend // nil on the host's backend
	dir string            // a directory the child may read, write and execute in
}

// forEachBackend runs f on the fake backend and, where this host cages, on
// the host's backend, whose policy adds what the tests' shell commands
// need: fork, and dir read-write and executable.
func forEachBackend(t *testing.T, popts []profile.Option, opts []cage.Option, f func(t *testing.T, c lcage)) {
	t.Run("fake", func(t *testing.T) {
		c, fb := fakeCage(t, popts, opts...)
		f(t, lcage{c, fb, t.TempDir()})
	})
	t.Run("host", func(t *testing.T) {
		if err := cage.Probe().Err(); err != nil {
			testenv.Skip(t, testenv.ReasonCannotCage, err.Error())
		}
		dir := t.TempDir()
		// Waive: git and shell start-up files under a writable tree are a
		// gap Linux refuses to plan otherwise; dir is a scratch directory.
		p := append([]profile.Option{profile.Fork(), profile.ReadWrite(dir), profile.Exec(dir), profile.Waive(profile.TrustHandoff)}, popts...)
		c, err := cage.New(mustPolicy(t, p...), append([]cage.Option{cage.WithHome(t.TempDir())}, opts...)...)
		if err != nil {
			skipIfTooOld(t, err)
			t.Fatal(err)
		}
		f(t, lcage{c, nil, dir})
	})
}

// onFake runs f on the fake backend only, for the tests whose host runs
// are in tests/.
func onFake(t *testing.T, popts []profile.Option, opts []cage.Option, f func(t *testing.T, c lcage)) {
	c, fb := fakeCage(t, popts, opts...)
	f(t, lcage{c, fb, t.TempDir()})
}

// alive reports whether pid names a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

func TestLifecycleOutputAndStdin(t *testing.T) {
	forEachBackend(t, nil, nil, func(t *testing.T, c lcage) {
		cmd := c.Command(t.Context(), "/bin/sh", "-c", "cat; echo err >&2; echo out")
		cmd.Stdin = strings.NewReader("in\n")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("Output: %v", err)
		}
		if string(out) != "in\nout\n" || stderr.String() != "err\n" {
			t.Errorf("stdout %q stderr %q, want %q and %q", out, stderr.String(), "in\nout\n", "err\n")
		}
		if c.fb != nil && len(c.fb.Spawns()) != 1 {
			t.Errorf("backend prepared %d spawns, want 1", len(c.fb.Spawns()))
		}
		if !cmd.ProcessState.Success() {
			t.Errorf("ProcessState = %v", cmd.ProcessState)
		}
	})
}

func TestLifecycleExitError(t *testing.T) {
	forEachBackend(t, nil, nil, func(t *testing.T, c lcage) {
		cmd := c.Command(t.Context(), "/bin/sh", "-c", "echo oops >&2; exit 3")
		_, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 || string(ee.Stderr) != "oops\n" {
			t.Fatalf("Output: %v, want *exec.ExitError with code 3 and its stderr", err)
		}
		out, err := c.Command(t.Context(), "/bin/sh", "-c", "echo a; echo b >&2").CombinedOutput()
		if err != nil || string(out) != "a\nb\n" {
			t.Errorf("CombinedOutput = %q, %v", out, err)
		}
	})
}

// TestLifecycleStepNamed: a failing backend step is an *ApplyError with a
// typed step, and the target never runs.
func TestLifecycleStepNamed(t *testing.T) {
	for _, step := range []cage.Step{cage.StepApply, cage.StepConfirm, cage.StepConsume} {
		t.Run(step.String(), func(t *testing.T) {
			c, fb := fakeCage(t, nil)
			fb.FailStep = step
			ran := filepath.Join(t.TempDir(), "ran")
			cmd := c.Command(t.Context(), "/bin/sh", "-c", "touch "+ran)
			err := cmd.Run()
			var ae *cage.ApplyError
			if !errors.As(err, &ae) || ae.Step != step || ae.Call != "close(-1)" || ae.Errno != syscall.EBADF {
				t.Fatalf("Run: %v, want *ApplyError at %v, call close(-1), with EBADF", err, step)
			}
			if _, err := os.Stat(ran); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the target ran: %v", err)
			}
			if cmd.Process != nil {
				t.Error("Process set after a failed Start")
			}
		})
	}
	// A missing target fails at exec, named.
	c, _ := fakeCage(t, nil)
	err := c.Command(t.Context(), "/nonexistent/prog").Run()
	var ae *cage.ApplyError
	if !errors.As(err, &ae) || ae.Step != cage.StepExec || ae.Call != "" || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Run of a missing program: %v, want *ApplyError at exec with ENOENT", err)
	}
}

// TestLifecycleRefusesBackendWithoutConfirm: a backend bug that prepares
// no confirm call cannot start an unconfirmed child.
func TestLifecycleRefusesBackendWithoutConfirm(t *testing.T) {
	c, fb := fakeCage(t, nil)
	fb.NoConfirm = true
	ran := filepath.Join(t.TempDir(), "ran")
	cmd := c.Command(t.Context(), "/bin/sh", "-c", "touch "+ran)
	if err := cmd.Run(); err == nil || cmd.Process != nil {
		t.Fatalf("Run without a confirm call: %v, process %v; want a refusal", err, cmd.Process)
	}
	if _, err := os.Stat(ran); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the target ran: %v", err)
	}
}

func TestLifecycleProbeRefusal(t *testing.T) {
	c, fb := fakeCage(t, nil)
	fb.ProbeErr = &cage.UnsupportedError{OSBuild: "test", What: "no"}
	ran := filepath.Join(t.TempDir(), "ran")
	if err := c.Command(t.Context(), "/bin/sh", "-c", "touch "+ran).Run(); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Run with a failing probe: %v, want unsupported", err)
	}
	if _, err := os.Stat(ran); !errors.Is(err, fs.ErrNotExist) || len(fb.Spawns()) != 0 {
		t.Errorf("the target ran (%v) or the backend prepared a spawn (%d)", err, len(fb.Spawns()))
	}
}

// TestStartOnce: Start may be called once, even after it failed, and two
// concurrent Starts start one child.
func TestStartOnce(t *testing.T) {
	c, fb := fakeCage(t, nil)
	fb.ProbeErr = errors.New("transient")
	cmd := c.Command(t.Context(), "/bin/true")
	if err := cmd.Start(); err == nil {
		t.Fatal("Start with a failing probe succeeded")
	}
	fb.ProbeErr = nil
	if err := cmd.Start(); err == nil || cmd.Process != nil {
		t.Fatalf("second Start after a failed one: %v, want an error and no process", err)
	}
	if err := cmd.Wait(); err == nil {
		t.Error("Wait after a failed Start returned nil")
	}

	for range 20 {
		c, fb := fakeCage(t, nil)
		cmd := c.Command(t.Context(), "/bin/true")
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Go(func() { errs[i] = cmd.Start() })
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("concurrent Starts returned %v and %v; want exactly one success", errs[0], errs[1])
		}
		if err := cmd.Wait(); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		if n := len(fb.Spawns()); n != 1 {
			t.Fatalf("%d children prepared, want 1", n)
		}
		if err := cmd.Wait(); err == nil {
			t.Fatal("second Wait returned nil")
		}
	}
}

// TestLifecycleContextEndsRun: the context's end kills the child and
// every process of its group; Wait reports the context's error. The
// context ends once the background process exists (not after a fixed time,
// which a slow machine, such as .ci/kernel-matrix's emulated one, can spend
// before the shell runs). On the host: tests.TestContextEndsRun.
func TestLifecycleContextEndsRun(t *testing.T) {
	onFake(t, nil, nil, func(t *testing.T, c lcage) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		pidFile := filepath.Join(c.dir, "pid")
		cmd := c.Command(ctx, "/bin/sh", "-c", "sleep 60 & echo $! > "+pidFile+".new; mv "+pidFile+".new "+pidFile+"; wait")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var b []byte
		var err error
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if b, err = os.ReadFile(pidFile); err == nil {
				break
			}
		}
		cancel()
		start := time.Now()
		if werr := cmd.Wait(); !errors.Is(werr, context.Canceled) {
			t.Errorf("Wait: %v, want context.Canceled", werr)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the run outlived its context by %v", d)
		}
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid <= 1 || alive(pid) {
			t.Errorf("the run's background process %d survived the context", pid)
		}
	})
}

// TestLifecycleDaemonKilledAtRunEnd: a child that leaves a background
// process holding its stdout open: Wait ends it (else the copy would never
// end), through the backend, and a forking run's spawn carries the run
// marker. On the host: tests.TestDaemonKilledAtRunEnd.
func TestLifecycleDaemonKilledAtRunEnd(t *testing.T) {
	onFake(t, []profile.Option{profile.Fork()}, nil, func(t *testing.T, c lcage) {
		cmd := c.Command(t.Context(), "/bin/sh", "-c", "sleep 60 & echo $!")
		out, err := testenv.OutputWithin(t, 30*time.Second, "Wait blocked on a pipe held by the run's background process", cmd.Output)
		if err != nil {
			t.Fatalf("Output: %v", err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		if pid <= 1 || alive(pid) {
			t.Errorf("background process %d survived the run", pid)
		}
		if c.fb.Ends() == 0 {
			t.Error("the backend was never asked to end the run")
		}
		sp := c.fb.Spawns()
		if len(sp) != 1 || !strings.HasPrefix(sp[0].Marker, cage.RunPrefix()) {
			t.Errorf("a forking run's spawn got marker %q, want one with the run prefix", sp[0].Marker)
		}
	})
}

// TestLifecycleConcurrentRunsEndSeparately: ending one run leaves
// another's processes alone. On the host:
// tests.TestConcurrentRunsEndSeparately.
func TestLifecycleConcurrentRunsEndSeparately(t *testing.T) {
	onFake(t, []profile.Option{profile.Fork()}, nil, func(t *testing.T, c lcage) {
		dir := c.dir
		start := func(name string) (*cage.Cmd, int) {
			f := filepath.Join(dir, name)
			cmd := c.Command(t.Context(), "/bin/sh", "-c", "sleep 60 & echo $! > "+f+".tmp; mv "+f+".tmp "+f+"; wait")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for range 500 {
				if b, err := os.ReadFile(f); err == nil {
					pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
					return cmd, pid
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Fatalf("%s never wrote its background pid", name)
			return nil, 0
		}
		a, pa := start("a")
		b, pb := start("b")
		if err := a.Kill(); err != nil {
			t.Fatalf("Kill a: %v", err)
		}
		if err := a.Wait(); err == nil {
			t.Error("Wait after Kill returned nil")
		}
		if alive(pa) {
			t.Errorf("run a's background process %d survived a's end", pa)
		}
		if !alive(pb) {
			t.Fatalf("run b's background process %d died when a ended", pb)
		}
		_ = b.Kill()
		_ = b.Wait()
		if alive(pb) {
			t.Errorf("run b's background process %d survived b's end", pb)
		}
	})
}

// TestRunNotEndedSurfaced: what the backend could not end is never hidden
// behind a successful exit.
func TestRunNotEndedSurfaced(t *testing.T) {
	c, fb := fakeCage(t, nil)
	fb.EndErr = fmt.Errorf("%w: could not check processes 42: %w", cage.ErrRunNotEnded, syscall.EPERM)
	err := c.Command(t.Context(), "/bin/true").Run()
	if !errors.Is(err, cage.ErrRunNotEnded) || !errors.Is(err, syscall.EPERM) || !strings.Contains(err.Error(), "processes 42") {
		t.Errorf("Run: %v, want ErrRunNotEnded naming pid 42", err)
	}
	err = c.Command(t.Context(), "/bin/false").Run()
	var ee *exec.ExitError
	if !errors.Is(err, cage.ErrRunNotEnded) || !errors.As(err, &ee) {
		t.Errorf("Run of a failing target: %v, want both the exit and ErrRunNotEnded", err)
	}
}

// TestLifecyclePrivateTempSlashes: a TMPDIR spelled with a trailing or a
// doubled slash (macOS's always ends in one: /var/folders/.../T/) still
// gives a private TMPDIR, in the plain spelling; one with ".." is refused
// by name (dropping it lexically could name another directory than the
// kernel does through a link).
func TestLifecyclePrivateTempSlashes(t *testing.T) {
	base := t.TempDir()
	for _, tmp := range []string{base + "/", base + "//", strings.Replace(base, "/", "//", 1) + "/"} {
		t.Run(tmp, func(t *testing.T) {
			onFake(t, nil, []cage.Option{cage.WithPrivateTemp()}, func(t *testing.T, c lcage) {
				t.Setenv("TMPDIR", tmp) // read at each run's start
				out, err := c.Command(t.Context(), "/bin/sh", "-c", `echo "$TMPDIR"`).Output()
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, base+"/procage-run-") {
					t.Errorf("TMPDIR %q: the run's is %q, want %s/procage-run-*", tmp, got, base)
				}
			})
		})
	}
	c, _ := fakeCage(t, nil, cage.WithPrivateTemp())
	t.Setenv("TMPDIR", base+"/x/..")
	if err := c.Command(t.Context(), "/bin/true").Run(); err == nil || !strings.Contains(err.Error(), "not normalised") {
		t.Errorf("TMPDIR with ..: %v, want the resolver's refusal", err)
	}
}

// TestLifecyclePrivateTemp: the run's TMPDIR is made, handed to the
// backend as a read-write grant and removed; an explicit TMPDIR wins. On
// the host: tests.TestPrivateTemp.
func TestLifecyclePrivateTemp(t *testing.T) {
	onFake(t, nil, []cage.Option{cage.WithPrivateTemp()}, func(t *testing.T, c lcage) {
		out, err := c.Command(t.Context(), "/bin/sh", "-c", `echo "$TMPDIR"; touch "$TMPDIR/f" && echo ok`).Output()
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 2 || lines[1] != "ok" || !strings.Contains(lines[0], "procage-run-") {
			t.Fatalf("output %q, want the private TMPDIR and ok", out)
		}
		if _, err := os.Stat(lines[0]); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("private TMPDIR %s left after the run: %v", lines[0], err)
		}
		sp := c.fb.Spawns()
		if len(sp) != 1 || sp[0].Temp != lines[0] || !slices.Contains(sp[0].Grants, cage.Grant{Path: lines[0], Write: true}) {
			t.Errorf("spawn grants %+v, want the private TMPDIR read-write", sp)
		}
		// An explicit Env naming TMPDIR wins.
		cmd := c.Command(t.Context(), "/bin/sh", "-c", `echo "$TMPDIR"`)
		cmd.Env = []string{"TMPDIR=/mine"}
		if out, err := cmd.Output(); err != nil || string(out) != "/mine\n" {
			t.Errorf("explicit TMPDIR: %q, %v", out, err)
		}
	})
}

func TestGrantsReachBackend(t *testing.T) {
	c, fb := fakeCage(t, nil)
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	cmd := c.Command(t.Context(), "/bin/true")
	cmd.Grants = []cage.Grant{{Path: link, Write: true}, {Path: "/usr"}}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	want := []cage.Grant{{Path: dir, Write: true}, {Path: "/usr"}}
	if diff := cmp.Diff(want, fb.Spawns()[0].Grants); diff != "" {
		t.Errorf("grants handed to the backend (-want +got):\n%s", diff)
	}
	bad := c.Command(t.Context(), "/bin/true")
	bad.Grants = []cage.Grant{{Path: "relative"}}
	if err := bad.Run(); err == nil {
		t.Error("a relative grant was accepted")
	}
}

func TestLifecycleEnvironment(t *testing.T) {
	t.Setenv("PROCAGE_TEST_TOKEN", "secret")
	t.Setenv("PROCAGE_TEST_PLAIN", "plain")
	forEachBackend(t, nil, nil, func(t *testing.T, c lcage) {
		dir := c.dir
		cmd := c.Command(t.Context(), "/bin/sh", "-c", `echo "$PROCAGE_TEST_TOKEN|$PROCAGE_TEST_PLAIN|$PWD"`)
		cmd.Dir = dir
		env := cmd.Environ()
		if !slices.Contains(env, "PWD="+dir) || !slices.Contains(env, "PROCAGE_TEST_PLAIN=plain") || slices.Contains(env, "PROCAGE_TEST_TOKEN=secret") {
			t.Errorf("Environ() lacks PWD or the plain variable, or keeps the secret: %q", env)
		}
		out, err := cmd.Output()
		if err != nil || string(out) != "|plain|"+dir+"\n" {
			t.Errorf("child saw %q (%v), want %q", out, err, "|plain|"+dir+"\n")
		}
		explicit := c.Command(t.Context(), "/bin/sh", "-c", `echo "$A|$PROCAGE_TEST_PLAIN"`)
		explicit.Env = []string{"A=1", "A=2"}
		if diff := cmp.Diff([]string{"A=2"}, explicit.Environ()); diff != "" {
			t.Errorf("Environ() of an explicit Env (-want +got):\n%s", diff)
		}
		if out, err := explicit.Output(); err != nil || string(out) != "2|\n" {
			t.Errorf("explicit Env: child saw %q (%v)", out, err)
		}
	})
}

// TestRelativePathAgainstDir: "./script.sh" is resolved against Dir, as
// os/exec (through the kernel) does.
func TestRelativePathAgainstDir(t *testing.T) {
	forEachBackend(t, nil, nil, func(t *testing.T, c lcage) {
		dir := c.dir
		if err := os.WriteFile(filepath.Join(dir, "script.sh"), []byte("#!/bin/sh\necho script ran\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := c.Command(t.Context(), "./script.sh")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil || string(out) != "script ran\n" {
			t.Fatalf("Output = %q, %v", out, err)
		}
		if c.fb != nil {
			if got := c.fb.Spawns()[0].Path; got != dir+"/./script.sh" {
				t.Errorf("executed %q, want %q", got, dir+"/./script.sh")
			}
		}
		if cmd.Path != "./script.sh" {
			t.Errorf("Start rewrote Path to %q", cmd.Path)
		}
		// The same with os/exec, for parity.
		ecmd := exec.Command("./script.sh")
		ecmd.Dir = dir
		if eout, err := ecmd.Output(); err != nil || string(eout) != string(out) {
			t.Errorf("os/exec: %q, %v", eout, err)
		}
	})
}

func TestStdPipes(t *testing.T) {
	forEachBackend(t, nil, nil, func(t *testing.T, c lcage) {
		cmd := c.Command(t.Context(), "/bin/sh", "-c", "cat; echo e >&2")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cmd.StdoutPipe(); err == nil {
			t.Error("a second StdoutPipe was accepted")
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := cmd.StdinPipe(); err == nil {
			t.Error("StdinPipe after Start was accepted")
		}
		go func() {
			fmt.Fprint(stdin, "hello")
			stdin.Close()
		}()
		var out, errOut []byte
		var wg sync.WaitGroup
		wg.Go(func() { out, _ = io.ReadAll(stdout) })
		wg.Go(func() { errOut, _ = io.ReadAll(stderr) })
		wg.Wait()
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		if string(out) != "hello" || string(errOut) != "e\n" {
			t.Errorf("stdout %q stderr %q", out, errOut)
		}
	})
}

func TestExtraFiles(t *testing.T) {
	forEachBackend(t, nil, nil, func(t *testing.T, c lcage) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		fmt.Fprint(w, "from fd 3")
		w.Close()
		// A descriptor the caller leaks without close-on-exec.
		leak, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(leak)
		// The shell's redirection fails on a closed descriptor (no /proc
		// needed, which a sandbox may deny).
		script := fmt.Sprintf("cat <&3; echo; if (exec 0<&%d) 2>/dev/null; then echo leaked; else echo closed; fi", leak)
		if c.fb != nil {
			script += "; ls /proc/$$/fd"
		}
		cmd := c.Command(t.Context(), "/bin/sh", "-c", script)
		cmd.ExtraFiles = []*os.File{r}
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		want := "from fd 3\nclosed\n"
		if c.fb != nil {
			want += "0\n1\n2\n3\n"
		}
		if string(out) != want {
			t.Errorf("output %q, want %q: fd 3's content, the leaked descriptor %d closed (and only descriptors 0-3)", out, want, leak)
		}
		bad := c.Command(t.Context(), "/bin/true")
		bad.ExtraFiles = []*os.File{nil}
		if err := bad.Run(); err == nil {
			t.Error("a nil ExtraFiles entry was accepted")
		}
	})
}

// TestWaitDelay: a pipe held open past the child's exit by a process the
// run does not end: Wait gives up after WaitDelay with exec.ErrWaitDelay,
// as os/exec does.
func TestWaitDelay(t *testing.T) {
	c, fb := fakeCage(t, nil)
	fb.KeepGroup = true
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := c.Command(t.Context(), "/bin/sh", "-c", "sleep 5 & echo $! > "+pidFile)
	var out strings.Builder
	cmd.Stdout = &out
	cmd.WaitDelay = 100 * time.Millisecond
	start := time.Now()
	err := cmd.Run()
	if !errors.Is(err, exec.ErrWaitDelay) {
		t.Errorf("Run: %v, want exec.ErrWaitDelay", err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("Wait took %v despite WaitDelay", d)
	}
	if b, err := os.ReadFile(pidFile); err == nil {
		if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestCancel: a custom Cancel runs when the context ends; its nil result
// makes Wait report the context, its error is reported, and the run is
// still ended.
func TestCancel(t *testing.T) {
	forEachBackend(t, nil, nil, func(t *testing.T, c lcage) {
		ctx, cancel := context.WithCancel(t.Context())
		cmd := c.Command(ctx, "/bin/sleep", "60")
		called := make(chan struct{})
		cmd.Cancel = func() error {
			close(called)
			return cmd.Process.Signal(syscall.SIGTERM)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cancel()
		err := cmd.Wait()
		select {
		case <-called:
		default:
			t.Fatal("Cancel was not called")
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Wait: %v, want context.Canceled", err)
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGTERM {
			t.Errorf("child ended with %v, want SIGTERM from Cancel", cmd.ProcessState)
		}

		// A Cancel that fails on a child that then exits by itself: Wait
		// reports Cancel's error (os/exec's rule).
		ctx, cancel = context.WithCancel(t.Context())
		cmd = c.Command(ctx, "/bin/sleep", "0.3")
		cancelErr := errors.New("cannot cancel")
		cmd.Cancel = func() error { return cancelErr }
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := cmd.Wait(); !errors.Is(err, cancelErr) {
			t.Errorf("Wait with a failing Cancel: %v, want it wrapped", err)
		}
	})
}

func TestKillBeforeExit(t *testing.T) {
	forEachBackend(t, nil, nil, func(t *testing.T, c lcage) {
		cmd := c.Command(t.Context(), "/bin/sleep", "60")
		if err := cmd.Kill(); err == nil {
			t.Error("Kill before Start returned nil")
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Kill(); err != nil {
			t.Fatalf("Kill: %v", err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("Wait after Kill: %v, want *exec.ExitError", err)
		}
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGKILL {
			t.Errorf("child ended with %v, want SIGKILL", ee)
		}
		if err := cmd.Kill(); err != nil {
			t.Errorf("Kill after Wait: %v, want nil (the run is over)", err)
		}
	})
}

func TestRlimitsAndSession(t *testing.T) {
	// Above the test process's descriptors, which the child holds until
	// exec (its confirm step opens one: WithRlimits).
	const nofile = 512
	limit := cage.WithRlimits(cage.Rlimit{Resource: unix.RLIMIT_NOFILE, Cur: nofile, Max: nofile})
	forEachBackend(t, nil, []cage.Option{limit}, func(t *testing.T, c lcage) {
		// Looked at from outside (the test process is not confined).
		cmd := c.Command(t.Context(), "/bin/sleep", "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Kill(); _ = cmd.Wait() }()
		pid := cmd.Process.Pid
		var lim unix.Rlimit
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &lim); err != nil || lim.Cur != nofile || lim.Max != nofile {
			t.Errorf("child's RLIMIT_NOFILE = %+v (%v), want %d/%d", lim, err, nofile, nofile)
		}
		if sid, err := unix.Getsid(pid); err != nil || sid != pid {
			t.Errorf("child's session = %d (%v), want its own (%d)", sid, err, pid)
		}
		if c.fb != nil && c.fb.Spawns()[0].TTY != cage.TTYNewSession {
			t.Errorf("TTY handed to the backend = %v", c.fb.Spawns()[0].TTY)
		}
	})
}

// BenchmarkSpawnWait: the lifecycle's cost, a spawn and wait of /bin/true
// through the fake backend beside os/exec, alternating inside one loop so
// neither side pays for the other's garbage. The fake confines nothing:
// this measures the lifecycle and the fork/exec engine, not a sandbox.
func BenchmarkSpawnWait(b *testing.B) {
	c, _ := fakeCage(b, nil)
	var caged, plain time.Duration
	var n int
	for b.Loop() {
		start := time.Now()
		if err := c.Command(context.Background(), "/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		caged += mid.Sub(start)
		plain += time.Since(mid)
		n++
	}
	b.ReportMetric(float64(caged.Nanoseconds())/float64(n), "cage-ns/run")
	b.ReportMetric(float64(plain.Nanoseconds())/float64(n), "exec-ns/run")
	b.ReportMetric(float64(caged)/float64(plain), "cage/exec")
}
