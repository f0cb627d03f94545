//go:build darwin || linux

package tests

// The spawn tests both OSes share: one test, one set of assertions, run
// against Seatbelt on macOS and Landlock and seccomp on Linux. What differs
// (program paths, error texts, how to see that a child is caged, what a
// policy build is) comes from spawn_helper_darwin_test.go and
// spawn_helper_linux_test.go; tests only one OS has are in
// spawn_darwin_test.go and spawn_linux_test.go.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ebitengine/purego"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// spawnCage is newCage with the options every spawn test on this OS
// passes (osCageOptions).
func spawnCage(tb testing.TB, pol profile.Policy, opts ...cage.Option) *cage.Cage {
	tb.Helper()
	return newCage(tb, pol, append(osCageOptions(tb), opts...)...)
}

// program is one row of TestProgramsUnderBaseV1.
type program struct {
	name  string
	args  []string
	env   []string
	stdin string
	want  *regexp.Regexp
}

// TestProgramsUnderBaseV1: common programs, a Go program and this OS's
// own (osPrograms) run with correct output under Base V1 alone.
func TestProgramsUnderBaseV1(t *testing.T) {
	requireCage(t)
	c := spawnCage(t, policy(t, profile.Fork(), profile.Exec(testBinaryDir(t)))) // sh pipelines fork
	tests := append([]program{
		{"id", []string{"/usr/bin/id", "-u"}, nil, "", regexp.MustCompile(`^` + strconv.Itoa(os.Getuid()) + `\n$`)},
		{"date", []string{"/bin/date", "+%Y"}, nil, "", regexp.MustCompile(`^20\d\d\n$`)},
		{"sh", []string{"/bin/sh", "-c", "echo $((6*7))"}, nil, "", regexp.MustCompile(`^42\n$`)},
		{"bash", []string{"/bin/bash", "-c", "x=(a b c); echo ${#x[@]}"}, nil, "", regexp.MustCompile(`^3\n$`)},
		{"cat", []string{"/bin/cat"}, nil, "hello\n", regexp.MustCompile(`^hello\n$`)},
		{"awk", []string{"/usr/bin/awk", "{print $2+1}"}, nil, "a 41\n", regexp.MustCompile(`^42\n$`)},
		{"perl", []string{"/usr/bin/perl", "-e", "print 6*7, qq{\\n}"}, nil, "", regexp.MustCompile(`^42\n$`)},
		{"go", []string{os.Args[0]}, []string{helperEnv + "=hello"}, "", regexp.MustCompile(`^hello from go\n$`)},
	}, osPrograms()...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireProgram(t, tt.args[0])
			cmd := c.Command(t.Context(), tt.args[0], tt.args[1:]...)
			cmd.Stdin = strings.NewReader(tt.stdin)
			if programEnv != nil || tt.env != nil {
				cmd.Env = append(slices.Clone(programEnv), tt.env...)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v (stderr %q)", tt.args, err, stderr.String())
			}
			if !tt.want.Match(out) {
				t.Errorf("%v: output %q does not match %v (stderr %q)", tt.args, out, tt.want, stderr.String())
			}
		})
	}
}

// TestBaseV1Refusals: home, temporary files and the network stay refused.
func TestBaseV1Refusals(t *testing.T) {
	requireCage(t)
	home, opts := refusalHome(t)
	c := newCage(t, policy(t, profile.Fork()), opts...)
	o, e, err := run(t, c, "/bin/ls", home)
	mustRefuse(t, "listing the home directory", o, e, err)

	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	o, e, err = run(t, c, "/bin/sh", "-c", "echo x > "+filepath.Join(tmp, "procage-denied-"+strconv.Itoa(os.Getpid())))
	mustRefuse(t, "writing a temporary file", o, e, err)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	connect := fmt.Sprintf(`IO::Socket::INET->new(PeerAddr => "%s") or die "$!\n"`, ln.Addr())
	mustWorkOutside(t, "/usr/bin/perl", "-MIO::Socket::INET", "-e", connect)
	o, e, err = run(t, c, "/usr/bin/perl", "-MIO::Socket::INET", "-e", connect)
	mustRefuse(t, "connecting to a loopback listener", o, e, err)
}

// TestDeniedAccessFails: a denied file access fails with this OS's denial
// (deniedText) and a non-zero exit (*exec.ExitError).
func TestDeniedAccessFails(t *testing.T) {
	requireCage(t)
	c := spawnCage(t, policy(t))
	secret := filepath.Join(tempHome(t), "not-granted.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, e, err := run(t, c, "/bin/cat", secret)
	mustRefuse(t, "reading a file the policy does not name", o, e, err)
	if !strings.Contains(e, deniedText) || strings.Contains(o, "secret") {
		t.Errorf("stdout %q stderr %q, want %q and not the secret", o, e, deniedText)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Errorf("got %T, want *exec.ExitError", err)
	}
}

// TestGrant: a grant makes one spawn able to read a path, and only it.
func TestGrant(t *testing.T) {
	requireCage(t)
	c := spawnCage(t, policy(t))
	dir := tempHome(t)
	f := filepath.Join(dir, "granted.txt")
	if err := os.WriteFile(f, []byte("granted"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := c.Command(t.Context(), "/bin/cat", f)
	cmd.Grants = []cage.Grant{{Path: dir}}
	out, err := cmd.Output()
	if err != nil || string(out) != "granted" {
		t.Fatalf("with a grant: %q, %v", out, err)
	}
	o, e, err := run(t, c, "/bin/cat", f)
	mustRefuse(t, "the next spawn without the grant", o, e, err)
}

// TestApplyErrorNamesStep: a target the policy cannot execute never runs:
// Start reports the exec step with this OS's errno (execDenied, an
// fs.ErrPermission); a missing working directory fails the chdir step.
func TestApplyErrorNamesStep(t *testing.T) {
	requireCage(t)
	c := spawnCage(t, policy(t))
	dir := tempHome(t)
	prog := filepath.Join(dir, "prog")
	marker := filepath.Join(dir, "ran")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho > "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := c.Command(t.Context(), prog).Run()
	var ae *cage.ApplyError
	if !errors.As(err, &ae) || ae.Step != cage.StepExec || ae.Errno != execDenied || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("running a program outside the policy: got %v, want ApplyError at exec with %v", err, execDenied)
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the target ran: %v", err)
	}

	cmd := c.Command(t.Context(), trueBin)
	cmd.Dir = filepath.Join(dir, "missing")
	if err := cmd.Run(); !errors.As(err, &ae) || ae.Step != cage.StepDir || ae.Errno != syscall.ENOENT {
		t.Errorf("missing Dir: got %v, want ApplyError at chdir with ENOENT", err)
	}
}

// TestExtraDescriptorsDoNotLeak: 1,000 descriptors open without
// close-on-exec in the parent do not reach the child.
func TestExtraDescriptorsDoNotLeak(t *testing.T) {
	requireCage(t)
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var extra []int
	defer func() {
		for _, fd := range extra {
			syscall.Close(fd)
		}
	}()
	for range 1000 {
		fd, err := syscall.Dup(int(null.Fd())) // dup clears FD_CLOEXEC
		if err != nil {
			t.Fatalf("dup: %v (raise the descriptor limit)", err)
		}
		extra = append(extra, fd)
	}
	c := spawnCage(t, policy(t, profile.Exec(testBinaryDir(t))))
	cmd := c.Command(t.Context(), os.Args[0])
	cmd.Env = []string{helperEnv + "=fds"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	leaked := 0
	for _, f := range strings.Fields(string(out)) {
		n, _ := strconv.Atoi(f)
		if slices.Contains(extra, n) {
			leaked++
		}
	}
	if leaked > 0 {
		t.Errorf("%d of 1000 extra descriptors reached the child (open: %s)", leaked, out)
	}
}

// startPrinting starts cmd and returns the first line it prints, a pid.
func startPrinting(t *testing.T, cmd *cage.Cmd) int {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		pw.Close()
		t.Fatalf("Start: %v", err)
	}
	pw.Close()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's output: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("child printed %q, want a pid", line)
	}
	return pid
}

// TestConcurrentRunsEndSeparately: ending one run of a forking cage kills
// its processes and leaves another run's alone.
func TestConcurrentRunsEndSeparately(t *testing.T) {
	requireCage(t)
	c := spawnCage(t, policy(t, profile.Fork()))
	a := c.Command(t.Context(), "/bin/sh", "-c", "/bin/sleep 60 & echo $!; wait")
	b := c.Command(t.Context(), "/bin/sh", "-c", "/bin/sleep 60 & echo $!; wait")
	pa, pb := startPrinting(t, a), startPrinting(t, b)
	if err := a.Kill(); err != nil {
		t.Errorf("Kill a: %v", err)
	}
	if err := a.Wait(); err == nil {
		t.Error("Wait after Kill returned nil")
	}
	if !waitGone(pa, 5*time.Second) {
		t.Errorf("run a's background process %d survived its run", pa)
	}
	if !alive(pb) {
		t.Errorf("ending run a killed run b's process %d", pb)
	}
	if err := b.Kill(); err != nil {
		t.Errorf("Kill b: %v", err)
	}
	_ = b.Wait()
	if !waitGone(pb, 5*time.Second) {
		t.Errorf("run b's background process %d survived its run", pb)
	}
}

// TestDaemonKilledAtRunEnd: a double-forked daemon that tries setsid
// (macOS lets it, and the run marker finds it; Linux's seccomp filter
// refuses it, so it stays in the run's process group) is killed when Wait
// returns; so is a background process that holds the run's stdout open,
// which would otherwise keep Wait's copy from ending.
func TestDaemonKilledAtRunEnd(t *testing.T) {
	requireCage(t)
	c := spawnCage(t, policy(t, profile.Fork()))
	cmd := c.Command(t.Context(), "/usr/bin/perl", "-MPOSIX", "-e",
		`$|=1; fork and exit; my $s = POSIX::setsid(); fork and exit; print STDERR "setsid: ", ($s == -1 ? "$!" : "ok"), "\n"; print "$$\n"; close STDOUT; sleep 60`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	pid := startPrinting(t, cmd)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if !waitGone(pid, 5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("daemon %d outlived its run", pid)
	}
	if want := "setsid: " + setsidResult; !strings.Contains(stderr.String(), want) {
		t.Errorf("setsid in a forking run: %q, want %q", stderr.String(), want)
	}

	cmd = c.Command(t.Context(), "/bin/sh", "-c", "/bin/sleep 60 & echo $!")
	out, err := testenv.OutputWithin(t, 30*time.Second, "Wait blocked on a pipe held by the run's background process", cmd.Output)
	if err != nil {
		t.Fatalf("Output: %v", err)
	}
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(out))); pid <= 1 || !waitGone(pid, 5*time.Second) {
		t.Errorf("background process %q survived the run", out)
	}
}

// TestContextEndsRun: cancelling the context kills the run, and in a
// forking cage every process of the run.
func TestContextEndsRun(t *testing.T) {
	requireCage(t)
	c := spawnCage(t, policy(t))
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := c.Command(ctx, "/bin/sleep", "60").Run()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run: got %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the run outlived its context by %v", d)
	}

	f := spawnCage(t, policy(t, profile.Fork()))
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	cmd := f.Command(ctx, "/bin/sh", "-c", "/bin/sleep 60 & echo $!; wait")
	pid := startPrinting(t, cmd)
	cancel()
	if err := cmd.Wait(); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait: got %v, want context.Canceled", err)
	}
	if !waitGone(pid, 5*time.Second) {
		t.Errorf("the run's background process %d survived the context", pid)
	}
}

// TestManyChildrenCaged: 100 children spawned while other goroutines load
// libraries are all caged (checkCaged: sandbox_check on macOS;
// no_new_privs, a seccomp filter and no capabilities on Linux).
func TestManyChildrenCaged(t *testing.T) {
	requireCage(t)
	check := checkCaged(t)
	c := spawnCage(t, policy(t))
	stop := make(chan struct{})
	var loaders sync.WaitGroup
	for range 4 {
		loaders.Add(1)
		go func() {
			defer loaders.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if h, err := purego.Dlopen(loaderLib, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
					_ = purego.Dlclose(h)
				}
			}
		}()
	}
	defer func() { close(stop); loaders.Wait() }()

	cmds := make([]*cage.Cmd, 100)
	var wg sync.WaitGroup
	errs := make(chan error, len(cmds))
	for i := range cmds {
		cmds[i] = c.Command(t.Context(), "/bin/sleep", "30")
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmds[i].Start(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("Start: %v", err)
	}
	for _, cmd := range cmds {
		if cmd.Process == nil {
			continue
		}
		check(t, cmd.Process.Pid)
		_ = cmd.Kill()
		_ = cmd.Wait()
	}
}

// TestNestedCage: the test binary re-executed inside a cage builds a cage
// and spawns from it. macOS refuses New there (ErrAlreadySandboxed); on
// Linux Landlock domains and seccomp filters stack, so New works, but a
// spawn from inside a forking cage fails closed: the outer filter refuses
// the inner probe child's setsid (EPERM), so the host is unsupported there
// and the target never runs.
func TestNestedCage(t *testing.T) {
	requireCage(t)
	c := spawnCage(t, policy(t, append(nestedPolicy, profile.Exec(testBinaryDir(t)))...))
	cmd := c.Command(t.Context(), os.Args[0])
	cmd.Env = []string{helperEnv + "=nested-cage", "HOME=/nonexistent-home"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v (%s)", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != nestedResult {
		t.Errorf("a cage inside a cage: %q, want %s", got, nestedResult)
	}
}

// TestPolicyBuiltOncePerCage: a cage builds its policy (compiles the
// Seatbelt profile; builds the Landlock ruleset) once for 100 spawns; a
// spawn with a grant builds grantBuilds more (macOS issues an extension
// instead, Linux builds its own ruleset).
func TestPolicyBuiltOncePerCage(t *testing.T) {
	requireCage(t)
	builds, _ := policyBuilds(t)
	before := builds()
	c := spawnCage(t, policy(t))
	for range 100 {
		if err := c.Command(t.Context(), trueBin).Run(); err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	if n := builds() - before; n != 1 {
		t.Errorf("New plus 100 spawns built the policy %d times, want 1", n)
	}
	cmd := c.Command(t.Context(), trueBin)
	cmd.Grants = []cage.Grant{{Path: t.TempDir()}}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if n := builds() - before; n != 1+grantBuilds {
		t.Errorf("after a spawn with a grant: %d builds, want %d", n, 1+grantBuilds)
	}
}

// BenchmarkSpawn: caged spawns of true from one cage; policy builds per
// spawn (compiles/op on macOS, rulesets/op on Linux) must be 0: the build
// happened in New.
func BenchmarkSpawn(b *testing.B) {
	requireCage(b)
	builds, unit := policyBuilds(b)
	c := spawnCage(b, policy(b))
	before := builds()
	b.ResetTimer()
	for b.Loop() {
		if err := c.Command(context.Background(), trueBin).Run(); err != nil {
			b.Fatal(err)
		}
	}
	n := builds() - before
	b.ReportMetric(float64(n)/float64(b.N), unit+"/op")
	if n != 0 {
		b.Errorf("%d %s during %d spawns, want 0", n, unit, b.N)
	}
}

// BenchmarkPlainSpawn is the baseline: an unsandboxed os/exec spawn.
func BenchmarkPlainSpawn(b *testing.B) {
	for b.Loop() {
		if err := exec.Command(trueBin).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPrivateTemp: WithPrivateTemp gives the run its own writable TMPDIR
// (under the real temporary directory, in the kernel's spelling:
// checkTempSpelling), where it may execute what it wrote (go test runs the
// binary it links there) on every OS, removes it when the run ends, gives
// another run another one, and keeps the directory next to it closed; an
// explicit Env naming TMPDIR wins.
func TestPrivateTemp(t *testing.T) {
	requireCage(t)
	c := spawnCage(t, policy(t), cage.WithPrivateTemp())
	o, e, err := run(t, c, "/bin/sh", "-c", `echo private > "$TMPDIR/f" && read x < "$TMPDIR/f" && echo "$x" && echo "$TMPDIR"`)
	if err != nil {
		t.Fatalf("writing the private TMPDIR: %v (%s%s)", err, o, e)
	}
	lines := strings.Split(strings.TrimSpace(o), "\n")
	if len(lines) != 2 || lines[0] != "private" {
		t.Fatalf("output %q, want \"private\" and the directory", o)
	}
	dir := lines[1]
	if !strings.Contains(filepath.Base(dir), "procage-run-") {
		t.Errorf("TMPDIR %q is not a procage run directory", dir)
	}
	checkTempSpelling(t, dir)
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the run's TMPDIR %s still exists after Wait (stat: %v)", dir, err)
	}
	// Another run gets another directory, and cannot write the parent.
	o2, e2, err := run(t, c, "/bin/sh", "-c", `echo "$TMPDIR"; echo x > "$TMPDIR/../procage-escape"`)
	if strings.TrimSpace(strings.Split(o2, "\n")[0]) == dir {
		t.Errorf("second run reused TMPDIR %q", dir)
	}
	mustRefuse(t, "writing next to the private TMPDIR", o2, e2, err)

	fc := spawnCage(t, policy(t, profile.Fork()), cage.WithPrivateTemp())
	o, e, err = run(t, fc, "/bin/sh", "-c", `cp /bin/echo "$TMPDIR/built" && "$TMPDIR/built" ran`)
	if err != nil || o != "ran\n" {
		t.Errorf("executing a program written to the private TMPDIR: %q, %v (%s)", o, err, e)
	}

	cmd := c.Command(t.Context(), "/bin/sh", "-c", `echo "$TMPDIR"`)
	cmd.Env = []string{"TMPDIR=/mine"}
	if out, err := cmd.Output(); err != nil || string(out) != "/mine\n" {
		t.Errorf("explicit TMPDIR: %q, %v", out, err)
	}
}
