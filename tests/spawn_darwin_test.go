package tests

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
	"github.com/procage-go/procage/profile"
)

// TestProgramsUnderBaseV1: the Rust procage's program list runs with correct output
// under Base V1 alone.
func TestProgramsUnderBaseV1(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t, profile.Fork())) // sh pipelines fork
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  *regexp.Regexp
	}{
		{"id", []string{"/usr/bin/id", "-u"}, "", regexp.MustCompile(`^` + strconv.Itoa(os.Getuid()) + `\n$`)},
		{"date", []string{"/bin/date", "+%Y"}, "", regexp.MustCompile(`^20\d\d\n$`)},
		{"uname", []string{"/usr/bin/uname", "-s"}, "", regexp.MustCompile(`^Darwin\n$`)},
		{"sh", []string{"/bin/sh", "-c", "echo $((6*7))"}, "", regexp.MustCompile(`^42\n$`)},
		{"zsh", []string{"/bin/zsh", "-c", "print -r -- ${(U)a:-hi}"}, "", regexp.MustCompile(`^HI\n$`)},
		{"bash", []string{"/bin/bash", "-c", "x=(a b c); echo ${#x[@]}"}, "", regexp.MustCompile(`^3\n$`)},
		{"cat", []string{"/bin/cat"}, "hello\n", regexp.MustCompile(`^hello\n$`)},
		{"sed", []string{"/usr/bin/sed", "s/b/x/"}, "abc\n", regexp.MustCompile(`^axc\n$`)},
		{"awk", []string{"/usr/bin/awk", "{print $2+1}"}, "a 41\n", regexp.MustCompile(`^42\n$`)},
		{"perl", []string{"/usr/bin/perl", "-e", "print 6*7, qq{\\n}"}, "", regexp.MustCompile(`^42\n$`)},
		{"tar", []string{"/bin/sh", "-c", "printf data | /usr/bin/tar -cf - --format ustar @- 2>/dev/null || /usr/bin/tar --version"}, "", regexp.MustCompile(`(bsdtar|data)`)},
		{"gzip", []string{"/bin/sh", "-c", "printf hello | /usr/bin/gzip -c | /usr/bin/gzip -dc"}, "", regexp.MustCompile(`^hello$`)},
		// A Foundation program: needs Sandbox call 67 and vnguard at start-up.
		{"plutil", []string{"/usr/bin/plutil", "-extract", "ProductName", "raw", "-o", "-", "/System/Library/CoreServices/SystemVersion.plist"}, "", regexp.MustCompile(`^(macOS|Mac OS X)\n?$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := c.Command(t.Context(), tt.args[0], tt.args[1:]...)
			cmd.Stdin = strings.NewReader(tt.stdin)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v (stderr %q)", tt.args, err, stderr.String())
			}
			if !tt.want.Match(out) {
				t.Errorf("%v: output %q does not match %v", tt.args, out, tt.want)
			}
		})
	}
}

// TestBaseV1Refusals: home, temporary files and the network stay refused.
func TestBaseV1Refusals(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t, profile.Fork()))
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
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

// TestDeniedAccessFails: a denied file access fails with EPERM.
func TestDeniedAccessFails(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t))
	secret := filepath.Join(tempHome(t), "not-granted.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, e, err := run(t, c, "/bin/cat", secret)
	mustRefuse(t, "reading a file the policy does not name", o, e, err)
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Errorf("got %T, want *exec.ExitError", err)
	}
}

// TestGrant: a grant makes one spawn able to read a path, and only it.
func TestGrant(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t))
	dir := tempHome(t)
	f := filepath.Join(dir, "granted.txt")
	if err := os.WriteFile(f, []byte("granted"), 0o600); err != nil {
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

// TestApplyErrorNamesStep: a target the profile cannot execute never runs;
// Start reports the exec step with EPERM.
func TestApplyErrorNamesStep(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t))
	dir := tempHome(t)
	prog := filepath.Join(dir, "prog")
	marker := filepath.Join(dir, "ran")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho > "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := c.Command(t.Context(), prog).Run()
	var ae *cage.ApplyError
	if !errors.As(err, &ae) || ae.Step != cage.StepExec || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("running a program outside the policy: got %v, want ApplyError at exec with EPERM", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the target ran: %v", err)
	}
}

// TestExtraDescriptorsDoNotLeak: 1,000 descriptors open without
// close-on-exec in the parent do not reach the child.
func TestExtraDescriptorsDoNotLeak(t *testing.T) {
	requireUnsandboxed(t)
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
	c := newCage(t, policy(t, profile.Exec(testBinaryDir(t))))
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

// startPrinting starts cmd and returns the first line it prints.
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
	requireUnsandboxed(t)
	c := newCage(t, policy(t, profile.Fork()))
	a := c.Command(t.Context(), "/bin/sh", "-c", "/bin/sleep 60 & echo $!; wait")
	b := c.Command(t.Context(), "/bin/sh", "-c", "/bin/sleep 60 & echo $!; wait")
	pa, pb := startPrinting(t, a), startPrinting(t, b)
	if err := a.Kill(); err != nil {
		t.Errorf("Kill a: %v", err)
	}
	_ = a.Wait()
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

// TestDaemonKilledAtRunEnd: a double-forked, setsid'd daemon is found by
// the run marker and killed when Wait returns.
func TestDaemonKilledAtRunEnd(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t, profile.Fork()))
	cmd := c.Command(t.Context(), "/usr/bin/perl", "-MPOSIX", "-e",
		`$|=1; fork and exit; POSIX::setsid(); fork and exit; print "$$\n"; close STDOUT; sleep 60`)
	pid := startPrinting(t, cmd)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if !waitGone(pid, 5*time.Second) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("daemon %d outlived its run", pid)
	}
}

// TestContextEndsRun: cancelling the context kills the run.
func TestContextEndsRun(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t))
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
}

// TestManyChildrenCaged: 100 children spawned while other goroutines load
// libraries are all sandboxed.
func TestManyChildrenCaged(t *testing.T) {
	requireUnsandboxed(t)
	l := lib(t)
	c := newCage(t, policy(t))
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
				if h, err := purego.Dlopen("/usr/lib/libz.1.dylib", purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
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
		is, err := l.IsSandboxed(cmd.Process.Pid)
		if err != nil || !is {
			t.Errorf("child %d: sandboxed = %v, %v", cmd.Process.Pid, is, err)
		}
		_ = cmd.Kill()
		_ = cmd.Wait()
	}
}

// TestAlreadySandboxedInsideCage: the test binary re-executed inside a cage
// calls cage.New and gets ErrAlreadySandboxed.
func TestAlreadySandboxedInsideCage(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t, profile.Exec(testBinaryDir(t))))
	cmd := c.Command(t.Context(), os.Args[0])
	cmd.Env = []string{helperEnv + "=new-cage"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v (%s)", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "already-sandboxed" {
		t.Errorf("cage.New inside a cage: %q, want already-sandboxed", got)
	}
}

// TestCompileOnce100Spawns: a non-forking cage compiles once for 100 spawns.
func TestCompileOnce100Spawns(t *testing.T) {
	requireUnsandboxed(t)
	l := lib(t)
	before := l.Compiles()
	c := newCage(t, policy(t))
	for range 100 {
		if err := c.Command(t.Context(), "/usr/bin/true").Run(); err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	if n := l.Compiles() - before; n != 1 {
		t.Errorf("New plus 100 spawns compiled %d times, want 1", n)
	}
}

// BenchmarkSpawn: caged spawns of /usr/bin/true from one cage; compiles/op
// must be 0 (the compile happened in New).
func BenchmarkSpawn(b *testing.B) {
	requireUnsandboxed(b)
	l := lib(b)
	c := newCage(b, policy(b))
	before := l.Compiles()
	b.ResetTimer()
	for b.Loop() {
		if err := c.Command(context.Background(), "/usr/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	n := l.Compiles() - before
	b.ReportMetric(float64(n)/float64(b.N), "compiles/op")
	if n != 0 {
		b.Errorf("%d compiles during %d spawns, want 0", n, b.N)
	}
}

// BenchmarkPlainSpawn is the baseline: an unsandboxed os/exec spawn.
func BenchmarkPlainSpawn(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/usr/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPrivateTemp: WithPrivateTemp gives the run its own writable TMPDIR,
// in the kernel's spelling, and removes it when the run ends.
func TestPrivateTemp(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t), cage.WithPrivateTemp())
	o, e, err := run(t, c, "/bin/sh", "-c", `echo private > "$TMPDIR/f" && cat "$TMPDIR/f" && echo "$TMPDIR"`)
	if err != nil {
		t.Fatalf("writing the private TMPDIR: %v (%s%s)", err, o, e)
	}
	lines := strings.Split(strings.TrimSpace(o), "\n")
	if len(lines) != 2 || lines[0] != "private" {
		t.Fatalf("output %q, want \"private\" and the directory", o)
	}
	dir := lines[1]
	if !strings.HasPrefix(dir, "/private/") || !strings.Contains(filepath.Base(dir), "procage-run-") {
		t.Errorf("TMPDIR %q is not a procage run directory in kernel spelling", dir)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the run's TMPDIR %s still exists after Wait (stat: %v)", dir, err)
	}
	// Another run gets another directory, and cannot see the first's.
	o2, _, err := run(t, c, "/bin/sh", "-c", `echo "$TMPDIR"`)
	if err != nil || strings.TrimSpace(o2) == dir {
		t.Errorf("second run TMPDIR %q (err %v), first was %q", o2, err, dir)
	}
}

// TestExecTargetOnly: the target runs, and cannot execute anything else.
// bash, not sh: /bin/sh is a shim that executes the shell
// /private/var/select/sh names, which would itself be another program.
func TestExecTargetOnly(t *testing.T) {
	requireUnsandboxed(t)
	c := newCage(t, policy(t, profile.ExecTargetOnly()))
	o, e, err := run(t, c, "/bin/bash", "-c", "echo builtin")
	if err != nil || strings.TrimSpace(o) != "builtin" {
		t.Fatalf("the target itself: %v, stdout %q, stderr %q", err, o, e)
	}
	o, e, err = run(t, c, "/bin/bash", "-c", "/bin/echo other")
	mustRefuse(t, "executing a program other than the target", o, e, err)
}
