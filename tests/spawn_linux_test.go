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
	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/profile"
)

// TestLinuxProgramsUnderBaseV1: the macOS lane's program list, and a Go
// and a Python program, run with correct output under Base V1 alone.
func TestLinuxProgramsUnderBaseV1(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t, profile.Fork(), profile.Exec(testBinaryDir(t))), cage.WithHome(tempHome(t))) // sh pipelines fork
	tests := []struct {
		name  string
		args  []string
		env   []string
		stdin string
		want  *regexp.Regexp
	}{
		{"id", []string{"/usr/bin/id", "-u"}, nil, "", regexp.MustCompile(`^` + strconv.Itoa(os.Getuid()) + `\n$`)},
		{"date", []string{"/bin/date", "+%Y"}, nil, "", regexp.MustCompile(`^20\d\d\n$`)},
		{"uname", []string{"/bin/uname", "-s"}, nil, "", regexp.MustCompile(`^Linux\n$`)},
		{"sh", []string{"/bin/sh", "-c", "echo $((6*7))"}, nil, "", regexp.MustCompile(`^42\n$`)},
		{"bash", []string{"/bin/bash", "-c", "x=(a b c); echo ${#x[@]}"}, nil, "", regexp.MustCompile(`^3\n$`)},
		{"cat", []string{"/bin/cat"}, nil, "hello\n", regexp.MustCompile(`^hello\n$`)},
		{"sed", []string{"/bin/sed", "s/b/x/"}, nil, "abc\n", regexp.MustCompile(`^axc\n$`)},
		{"awk", []string{"/usr/bin/awk", "{print $2+1}"}, nil, "a 41\n", regexp.MustCompile(`^42\n$`)},
		{"perl", []string{"/usr/bin/perl", "-e", "print 6*7, qq{\\n}"}, nil, "", regexp.MustCompile(`^42\n$`)},
		{"tar", []string{"/bin/sh", "-c", "printf data > /dev/null; /bin/tar -cf - /etc/hostname 2>/dev/null | /bin/tar -tf -"}, nil, "", regexp.MustCompile(`^etc/hostname\n$`)},
		{"gzip", []string{"/bin/sh", "-c", "printf hello | /bin/gzip -c | /bin/gzip -dc"}, nil, "", regexp.MustCompile(`^hello$`)},
		{"go", []string{os.Args[0]}, []string{helperEnv + "=hello"}, "", regexp.MustCompile(`^hello from go\n$`)},
		{"python", []string{"/usr/bin/python3", "-c", "import json, os; print(json.dumps({'n': os.cpu_count() > 0}))"}, nil, "", regexp.MustCompile(`^\{"n": true\}\n$`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.args[0]); err != nil {
				t.Skipf("%s: %v", tt.args[0], err)
			}
			cmd := c.Command(t.Context(), tt.args[0], tt.args[1:]...)
			cmd.Stdin = strings.NewReader(tt.stdin)
			cmd.Env = append([]string{"PATH=/usr/bin:/bin", "LC_ALL=C"}, tt.env...)
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

// TestLinuxBaseV1Refusals: home, temporary files and the network stay
// refused.
func TestLinuxBaseV1Refusals(t *testing.T) {
	requireCage(t)
	home := tempHome(t)
	if err := os.WriteFile(filepath.Join(home, "notes"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCage(t, policy(t, profile.Fork()), cage.WithHome(home))
	o, e, err := run(t, c, "/bin/ls", home)
	mustRefuse(t, "listing the home directory", o, e, err)

	tmp := os.TempDir()
	o, e, err = run(t, c, "/bin/sh", "-c", "echo x > "+filepath.Join(tmp, "procage-denied-"+strconv.Itoa(os.Getpid())))
	mustRefuse(t, "writing a temporary file", o, e, err)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	o, e, err = run(t, c, "/usr/bin/perl", "-MIO::Socket::INET", "-e",
		fmt.Sprintf(`IO::Socket::INET->new(PeerAddr => "%s") or die "$!\n"`, ln.Addr()))
	mustRefuse(t, "connecting to a loopback listener", o, e, err)
}

// TestLinuxDeniedAccessFails: a denied file access fails with "Permission
// denied" and a non-zero exit (*exec.ExitError).
func TestLinuxDeniedAccessFails(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	secret := filepath.Join(t.TempDir(), "not-granted.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	o, e, err := run(t, c, "/bin/cat", secret)
	mustRefuse(t, "reading a file the policy does not name", o, e, err)
	if !strings.Contains(e, "Permission denied") || strings.Contains(o, "secret") {
		t.Errorf("stdout %q stderr %q", o, e)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Errorf("got %T, want *exec.ExitError", err)
	}
}

// TestLinuxGrant: a grant makes one spawn able to read a path, and only it.
func TestLinuxGrant(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	dir := t.TempDir()
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

	// A write grant is a writable tree: git hooks in it cannot be denied,
	// so it is refused unless trust-handoff is waived (or the gap accepted).
	cmd = c.Command(t.Context(), "/bin/sh", "-c", "echo w > "+filepath.Join(dir, "w"))
	cmd.Grants = []cage.Grant{{Path: dir, Write: true}}
	var ge *profile.GapError
	if err := cmd.Run(); !errors.As(err, &ge) || !ge.Has(profile.GapTrustHandoff) {
		t.Errorf("write grant: %v, want a GapError naming %s", err, profile.GapTrustHandoff)
	}
	w := newCage(t, policy(t, profile.Waive(profile.TrustHandoff)), cage.WithHome(tempHome(t)))
	cmd = w.Command(t.Context(), "/bin/sh", "-c", "echo w > "+filepath.Join(dir, "w"))
	cmd.Grants = []cage.Grant{{Path: dir, Write: true}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write grant: %v (%s)", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "w")); string(b) != "w\n" {
		t.Errorf("written %q", b)
	}
}

// TestLinuxApplyErrorNamesStep: a target the policy cannot execute never
// runs (exec fails with EACCES, fs.ErrPermission); a missing working
// directory fails the chdir step; a bad resource limit the rlimit step.
func TestLinuxApplyErrorNamesStep(t *testing.T) {
	requireCage(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "prog")
	marker := filepath.Join(dir, "ran")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho > "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	err := c.Command(t.Context(), prog).Run()
	var ae *cage.ApplyError
	if !errors.As(err, &ae) || ae.Step != cage.StepExec || ae.Errno != syscall.EACCES || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("running a program outside the policy: got %v, want ApplyError at exec with EACCES", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the target ran: %v", err)
	}

	cmd := c.Command(t.Context(), "/bin/true")
	cmd.Dir = filepath.Join(dir, "missing")
	if err := cmd.Run(); !errors.As(err, &ae) || ae.Step != cage.StepDir || ae.Errno != syscall.ENOENT {
		t.Errorf("missing Dir: got %v, want ApplyError at chdir with ENOENT", err)
	}

	bad := newCage(t, policy(t), cage.WithHome(tempHome(t)), cage.WithRlimits(cage.Rlimit{Resource: 4096, Cur: 1, Max: 1}))
	if err := bad.Command(t.Context(), "/bin/true").Run(); !errors.As(err, &ae) || ae.Step != cage.StepRlimit || ae.Errno != syscall.EINVAL {
		t.Errorf("unknown resource: got %v, want ApplyError at rlimit with EINVAL", err)
	}
}

// TestLinuxExtraDescriptorsDoNotLeak: 1,000 descriptors open without
// close-on-exec in the parent do not reach the child.
func TestLinuxExtraDescriptorsDoNotLeak(t *testing.T) {
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
	c := newCage(t, policy(t, profile.Exec(testBinaryDir(t))), cage.WithHome(tempHome(t)))
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

// TestLinuxConcurrentRunsEndSeparately: ending one run of a forking cage
// kills its processes and leaves another run's alone.
func TestLinuxConcurrentRunsEndSeparately(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t, profile.Fork()), cage.WithHome(tempHome(t)))
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

// TestLinuxDaemonKilledAtRunEnd: a double-forked daemon that tries setsid
// (refused by seccomp) stays in the run's process group and is killed when
// Wait returns.
func TestLinuxDaemonKilledAtRunEnd(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t, profile.Fork()), cage.WithHome(tempHome(t)))
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
	if !strings.Contains(stderr.String(), "setsid: Operation not permitted") {
		t.Errorf("setsid in a forking run: %q, want EPERM", stderr.String())
	}
}

// TestLinuxContextEndsRun: cancelling the context kills the run.
func TestLinuxContextEndsRun(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
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

// procStatus returns the fields of /proc/<pid>/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			m[k] = strings.TrimSpace(v)
		}
	}
	return m
}

// TestLinuxManyChildrenCaged: 100 children spawned while other goroutines
// load libraries all run with no_new_privs, a seccomp filter and (as
// root) no capabilities.
func TestLinuxManyChildrenCaged(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
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
				if h, err := purego.Dlopen("libz.so.1", purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
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
		st := procStatus(t, cmd.Process.Pid)
		if st["NoNewPrivs"] != "1" || st["Seccomp"] != "2" || st["CapEff"] != "0000000000000000" {
			t.Errorf("child %d: NoNewPrivs %q Seccomp %q CapEff %q", cmd.Process.Pid, st["NoNewPrivs"], st["Seccomp"], st["CapEff"])
		}
		_ = cmd.Kill()
		_ = cmd.Wait()
	}
}

// TestLinuxRootIsNotRoot: in a cage every capability set is empty, even
// when the caller is root (the bounding set too: nothing can be regained
// by executing a setuid-root or file-capability program), and the
// securebits are locked.
func TestLinuxRootIsNotRoot(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t, profile.Read("/proc")), cage.WithHome(tempHome(t)))
	o, e, err := run(t, c, "/bin/cat", "/proc/self/status")
	if err != nil {
		t.Fatalf("cat: %v (%s)", err, e)
	}
	st := map[string]string{}
	for _, l := range strings.Split(o, "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok {
			st[k] = strings.TrimSpace(v)
		}
	}
	zero := "0000000000000000"
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
		if st[k] != zero {
			t.Errorf("%s = %q, want %s", k, st[k], zero)
		}
	}
	if os.Geteuid() == 0 && st["CapBnd"] != zero {
		t.Errorf("root: CapBnd = %q, want %s", st["CapBnd"], zero)
	}
	if st["NoNewPrivs"] != "1" || st["Seccomp"] != "2" {
		t.Errorf("NoNewPrivs %q Seccomp %q", st["NoNewPrivs"], st["Seccomp"])
	}
	// Root's own files outside the policy stay closed (Landlock binds root).
	o, e, err = run(t, c, "/bin/cat", "/root/.bashrc")
	if os.Geteuid() == 0 {
		if _, serr := os.Stat("/root/.bashrc"); serr == nil {
			mustRefuse(t, "root reading /root/.bashrc", o, e, err)
		}
	}
}

// TestLinuxPrivateTemp: WithPrivateTemp gives the run its own writable
// TMPDIR and removes it when the run ends.
func TestLinuxPrivateTemp(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t), cage.WithPrivateTemp(), cage.WithHome(tempHome(t)))
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
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the run's TMPDIR %s still exists after Wait (stat: %v)", dir, err)
	}
	// Another run gets another directory, and cannot write the parent.
	o2, e2, err := run(t, c, "/bin/sh", "-c", `echo "$TMPDIR"; echo x > "$TMPDIR/../procage-escape"`)
	if strings.TrimSpace(strings.Split(o2, "\n")[0]) == dir {
		t.Errorf("second run reused TMPDIR %q", dir)
	}
	mustRefuse(t, "writing next to the private TMPDIR", o2, e2, err)
}

// BenchmarkLinuxSpawn: a caged spawn and wait of true beside os/exec's,
// alternated inside one loop (and which goes first alternated too) so
// neither pays for the other's garbage; each side's time and the ratio are
// reported. new-session is the default (setsid); tty-inherit uses setpgid
// instead: with scheduler autogroups enabled, setsid creates a new
// autogroup (sched_autogroup_create_attach), which dominates under load.
func BenchmarkLinuxSpawn(b *testing.B) {
	requireCage(b)
	for _, mode := range []struct {
		name string
		tty  cage.TTY
	}{{"new-session", cage.TTYNewSession}, {"tty-inherit", cage.TTYInherit}} {
		b.Run(mode.name, func(b *testing.B) {
			c := newCage(b, policy(b), cage.WithHome(b.TempDir()), cage.WithTTY(mode.tty))
			var own, std time.Duration
			caged := func() {
				t := time.Now()
				if err := c.Command(context.Background(), "/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
				own += time.Since(t)
			}
			plain := func() {
				t := time.Now()
				if err := exec.Command("/bin/true").Run(); err != nil {
					b.Fatal(err)
				}
				std += time.Since(t)
			}
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					caged()
					plain()
				} else {
					plain()
					caged()
				}
			}
			b.ReportMetric(float64(own.Nanoseconds())/float64(b.N), "caged-ns/spawn")
			b.ReportMetric(float64(std.Nanoseconds())/float64(b.N), "os-exec-ns/spawn")
			b.ReportMetric(float64(own)/float64(std), "caged/os-exec")
		})
	}
}

// TestLinuxNestedCage: Landlock domains and seccomp filters stack, so New
// works inside a cage, but a spawn from inside a forking cage fails closed:
// the outer filter refuses the inner probe child's setsid (EPERM), so the
// host is unsupported there and the target never runs. (macOS refuses New
// there instead: TestAlreadySandboxedInsideCage.)
func TestLinuxNestedCage(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t, profile.Fork(), profile.Exec(testBinaryDir(t))), cage.WithHome(tempHome(t)))
	cmd := c.Command(t.Context(), os.Args[0])
	cmd.Env = []string{helperEnv + "=nested-cage", "HOME=/nonexistent-home"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v (%s)", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "unsupported EPERM" {
		t.Errorf("a spawn inside a cage: %q, want unsupported EPERM", got)
	}
}

// TestLinuxRulesetOncePerCage: a cage builds its Landlock ruleset once for
// any number of spawns without grants; a spawn with a grant builds its own.
func TestLinuxRulesetOncePerCage(t *testing.T) {
	requireCage(t)
	before := linuxsandbox.RulesetsBuilt()
	c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
	for range 100 {
		if err := c.Command(t.Context(), "/bin/true").Run(); err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	if n := linuxsandbox.RulesetsBuilt() - before; n != 1 {
		t.Errorf("New plus 100 spawns built %d rulesets, want 1", n)
	}
	cmd := c.Command(t.Context(), "/bin/true")
	cmd.Grants = []cage.Grant{{Path: t.TempDir()}}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if n := linuxsandbox.RulesetsBuilt() - before; n != 2 {
		t.Errorf("after a spawn with a grant: %d rulesets, want 2", n)
	}
}
