package cage_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/pathresolve/macfs"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
	"github.com/procage-go/procage/profile/sim"
)

func TestNewAlreadySandboxed(t *testing.T) {
	comp := &countingCompiler{}
	_, err := cage.New(mustPolicy(t), append(simOpts(t),
		cage.WithCompiler(comp),
		cage.WithSandboxCheck(func() (bool, error) { return true, nil }))...)
	if !errors.Is(err, cage.ErrAlreadySandboxed) {
		t.Fatalf("New in a sandboxed process: got %v, want ErrAlreadySandboxed", err)
	}
	if n := comp.count(); n != 0 {
		t.Errorf("compiled %d times before refusing, want 0", n)
	}

	checkErr := errors.New("check failed")
	_, err = cage.New(mustPolicy(t), append(simOpts(t),
		cage.WithSandboxCheck(func() (bool, error) { return false, checkErr }))...)
	if !errors.Is(err, checkErr) {
		t.Errorf("New with a failing sandbox check: got %v, want it wrapped", err)
	}
}

func TestNewCaseSensitive(t *testing.T) {
	tests := []struct {
		name       string
		opts       []profile.Option
		wantPath   string // "" means New succeeds
		wantVolume string
	}{
		{name: "read rule", opts: []profile.Option{profile.Read("/Volumes/CS/proj")},
			wantPath: "/Volumes/CS/proj", wantVolume: "/Volumes/CS/proj"},
		{name: "missing tail keeps the volume of its existing prefix", opts: []profile.Option{profile.ReadWrite("/Volumes/CS/new/dir")},
			wantPath: "/Volumes/CS/new/dir", wantVolume: "/Volumes/CS"},
		{name: "unix socket", opts: []profile.Option{profile.UnixSocket("/Volumes/CS/proj/agent.sock")},
			wantPath: "/Volumes/CS/proj/agent.sock", wantVolume: "/Volumes/CS/proj"},
		{name: "seatbelt-layer allow", opts: []profile.Option{profile.Seatbelt(`(allow file-read* (subpath "/Volumes/CS/proj"))`)},
			wantPath: "/Volumes/CS/proj", wantVolume: "/Volumes/CS/proj"},
		{name: "seatbelt-layer deny is fine", opts: []profile.Option{profile.Seatbelt(`(deny file-read* (subpath "/Volumes/CS/proj"))`)}},
		{name: "case-insensitive volume is fine", opts: []profile.Option{profile.Read("/Users/me/project")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comp := &countingCompiler{}
			c, err := cage.New(mustPolicy(t, tt.opts...), append(simOpts(t), cage.WithCompiler(comp))...)
			if tt.wantPath == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if c.Plan() == "" {
					t.Error("empty plan")
				}
				return
			}
			var cse *pathresolve.CaseSensitiveError
			if pe, ok := errors.AsType[*cage.PolicyError](err); !ok || pe.Kind != cage.ErrCaseSensitive || pe.Path != tt.wantPath {
				t.Errorf("New: got %#v, want a *PolicyError of kind ErrCaseSensitive for %s", err, tt.wantPath)
			}
			if !errors.As(err, &cse) {
				t.Fatalf("New: got %v, want *CaseSensitiveError", err)
			}
			if !errors.Is(err, pathresolve.ErrCaseSensitive) {
				t.Errorf("errors.Is(err, ErrCaseSensitive) = false for %v", err)
			}
			want := pathresolve.CaseSensitiveError{Path: tt.wantPath, Volume: tt.wantVolume}
			if diff := cmp.Diff(want, *cse); diff != "" {
				t.Errorf("CaseSensitiveError (-want +got):\n%s", diff)
			}
			if n := comp.count(); n != 0 {
				t.Errorf("compiled %d times before refusing, want 0", n)
			}
		})
	}
}

func TestNewHomeOnCaseSensitiveVolume(t *testing.T) {
	// Home is only denied (hard-deny classes), and a deny is fine there.
	fsys := simFS(t)
	c, err := cage.New(mustPolicy(t), cage.WithBackend(cage.BackendMacOS), cage.WithFS(fsys, fsys.Firmlinks()), cage.WithHome("/Volumes/CS/home"),
		cage.WithSandboxCheck(func() (bool, error) { return false, nil }), cage.WithCompiler(&countingCompiler{}))
	if err != nil {
		t.Fatalf("New with home on a case-sensitive volume: %v", err)
	}
	if got := c.Home(); got != "/Volumes/CS/home" {
		t.Errorf("Home() = %q, want /Volumes/CS/home", got)
	}
}

func TestGrantOnCaseSensitiveVolume(t *testing.T) {
	c, err := cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(&countingCompiler{}))...)
	if err != nil {
		t.Fatal(err)
	}
	cmd := c.Command(t.Context(), "/usr/bin/true")
	cmd.Grants = []cage.Grant{{Path: "/Volumes/CS/proj", Write: true}}
	err = cmd.Start()
	var cse *pathresolve.CaseSensitiveError
	if !errors.As(err, &cse) {
		t.Fatalf("Start with a grant on a case-sensitive volume: got %v, want *CaseSensitiveError", err)
	}
	if cse.Path != "/Volumes/CS/proj" {
		t.Errorf("Path = %q, want /Volumes/CS/proj", cse.Path)
	}
}

func TestNewLimit(t *testing.T) {
	comp := &countingCompiler{}
	_, err := cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(comp), cage.WithCompileLimit(3))...)
	var le *seatbelt.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("New over the limit: got %v, want *LimitError", err)
	}
	if pe, ok := errors.AsType[*cage.PolicyError](err); !ok || pe.Kind != cage.ErrTooManyRules || !errors.Is(err, cage.ErrTooManyRules) {
		t.Errorf("New over the limit: %v, want a *PolicyError of kind ErrTooManyRules", err)
	}
	if le.Limit != 3 || le.Rules <= 3 {
		t.Errorf("LimitError = %+v, want Limit 3 and more than 3 rules", *le)
	}
	if n := comp.count(); n != 0 {
		t.Errorf("compiled %d times over the limit, want 0 (libsandbox aborts on huge profiles)", n)
	}

	// The same policy fits under the default limit.
	if _, err := cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(comp))...); err != nil {
		t.Errorf("New under the default limit: %v", err)
	}
}

func TestNewCompileError(t *testing.T) {
	comp := &countingCompiler{err: &libsandbox.CompileError{Message: "unbound variable: frobnicate"}}
	_, err := cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(comp))...)
	pe, ok := errors.AsType[*cage.PolicyError](err)
	if !ok || pe.Kind != cage.ErrProfileRejected || !errors.Is(err, cage.ErrProfileRejected) {
		t.Fatalf("New with a rejected profile: got %v, want a *PolicyError of kind ErrProfileRejected", err)
	}
	if want := "cage: libsandbox rejected the profile: unbound variable: frobnicate"; err.Error() != want {
		t.Errorf("error = %q, want %q (libsandbox's message)", err, want)
	}

	other := errors.New("library gone")
	_, err = cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(&countingCompiler{err: other}))...)
	if _, ok := errors.AsType[*cage.PolicyError](err); !errors.Is(err, other) || ok {
		t.Errorf("New with a non-compile failure: got %v, want it wrapped and not a *PolicyError", err)
	}
}

func TestCompileOnce(t *testing.T) {
	comp := &countingCompiler{}
	c, err := cage.New(mustPolicy(t, profile.Read("/tmp/build")), append(simOpts(t), cage.WithCompiler(comp))...)
	if err != nil {
		t.Fatal(err)
	}
	if n := comp.count(); n != 1 {
		t.Fatalf("New compiled %d times, want 1", n)
	}
	if comp.texts[0] != c.Plan() || comp.params[0] != nil {
		t.Errorf("compiled text/params differ from the plan: params %v", comp.params[0])
	}
	for range 100 {
		_ = c.Command(t.Context(), "/usr/bin/true").Start() // unsupported off darwin
	}
	if n := comp.count(); n != 1 {
		t.Errorf("after 100 starts the non-forking cage compiled %d times, want 1", n)
	}
}

func TestForkingPlanParams(t *testing.T) {
	comp := &countingCompiler{}
	c, err := cage.New(mustPolicy(t, profile.Fork()), append(simOpts(t), cage.WithCompiler(comp))...)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{seatbelt.ParamRunPrefix, seatbelt.ParamRunMarker}
	if diff := cmp.Diff(want, c.SeatbeltPlan().Params); diff != "" {
		t.Errorf("Params (-want +got):\n%s", diff)
	}
	// New compiles a forking profile once, with placeholders, to report errors early.
	if comp.count() != 1 {
		t.Fatalf("New compiled %d times, want 1", comp.count())
	}
	var keys []string
	for _, p := range comp.params[0] {
		keys = append(keys, p.Key)
	}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("bound parameters (-want +got):\n%s", diff)
	}
	if !strings.Contains(c.Plan(), `(param "PROCAGE_RUN_MARKER")`) {
		t.Errorf("plan of a forking policy lacks the run marker parameter:\n%s", c.Plan())
	}
}

func TestSeatbeltPlanIsACopy(t *testing.T) {
	c, err := cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(&countingCompiler{}))...)
	if err != nil {
		t.Fatal(err)
	}
	before := c.Plan()
	p := c.SeatbeltPlan()
	p.Profile.Rules = p.Profile.Rules[:1]
	if c.Plan() != before || len(c.SeatbeltPlan().Profile.Rules) == 1 {
		t.Error("changing SeatbeltPlan's result changed the cage")
	}
}

func TestRewritesAndLinks(t *testing.T) {
	c, err := cage.New(mustPolicy(t, profile.Read("/tmp/build"), profile.ReadWrite("/System/Volumes/Data/Users/me/project")),
		append(simOpts(t), cage.WithCompiler(&countingCompiler{}))...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range c.Rewrites() {
		got = append(got, r.From+" -> "+r.To+" ("+r.Reason.String()+")")
	}
	want := []string{
		"/System/Volumes/Data/Users/me/project -> /Users/me/project (firmlink)",
		"/tmp/build -> /private/tmp/build (symlink)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Rewrites (-want +got):\n%s", diff)
	}
	plan := c.Plan()
	for _, s := range []string{`(subpath "/private/tmp/build")`, `(subpath "/Users/me/project")`, `(literal "/tmp")`} {
		if !strings.Contains(plan, s) {
			t.Errorf("plan lacks %s", s)
		}
	}
	if strings.Contains(plan, `(subpath "/tmp/build")`) {
		t.Error("plan still spells /tmp/build as written; the kernel would never match it")
	}
}

func TestCommandLookup(t *testing.T) {
	c, err := cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(&countingCompiler{}))...)
	if err != nil {
		t.Fatal(err)
	}
	if sh, err := exec.LookPath("sh"); err == nil {
		cmd := c.Command(t.Context(), "sh", "-c", "true")
		if cmd.Path != sh || cmd.Err != nil {
			t.Errorf("Command(sh): Path %q Err %v, want %q", cmd.Path, cmd.Err, sh)
		}
		if diff := cmp.Diff([]string{"sh", "-c", "true"}, cmd.Args); diff != "" {
			t.Errorf("Args (-want +got):\n%s", diff)
		}
	}
	cmd := c.Command(t.Context(), "procage-no-such-program")
	if err := cmd.Start(); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("Start of a missing program: got %v, want exec.ErrNotFound", err)
	}
	if cmd := c.Command(t.Context(), "./relative/prog"); cmd.Path != "./relative/prog" || cmd.Err != nil {
		t.Errorf("Command(./relative/prog): Path %q Err %v; want it kept for Start to resolve against Dir", cmd.Path, cmd.Err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Command(ctx, "/usr/bin/true").Start(); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a done context: got %v, want context.Canceled", err)
	}
}

func TestApplyErrorIs(t *testing.T) {
	tests := []struct {
		errno  syscall.Errno
		target error
		want   bool
	}{
		{syscall.EPERM, fs.ErrPermission, true},
		{syscall.EACCES, fs.ErrPermission, true},
		{syscall.ENOENT, fs.ErrNotExist, true},
		{syscall.ENOENT, fs.ErrPermission, false},
	}
	for _, tt := range tests {
		err := error(&cage.ApplyError{Step: cage.StepExec, Errno: tt.errno})
		if got := errors.Is(err, tt.target); got != tt.want {
			t.Errorf("errors.Is(ApplyError{%v}, %v) = %v, want %v", tt.errno, tt.target, got, tt.want)
		}
		// Short and fixed, as os/exec's: the step and the errno.
		if want := "cage: child step exec: " + tt.errno.Error(); err.Error() != want {
			t.Errorf("message %q, want %q", err, want)
		}
		named := &cage.ApplyError{Step: cage.StepApply, Call: "landlock_restrict_self", Errno: tt.errno}
		if want := "cage: child step apply (landlock_restrict_self): " + tt.errno.Error(); named.Error() != want {
			t.Errorf("message %q, want %q", named, want)
		}
	}
}

func TestOptionValidation(t *testing.T) {
	tests := map[string]cage.Option{
		"zero limit":      cage.WithCompileLimit(0),
		"relative home":   cage.WithHome("home/me"),
		"unknown tty":     cage.WithTTY(cage.TTY(7)),
		"nil fs":          cage.WithFS(nil, nil),
		"soft above max":  cage.WithRlimits(cage.Rlimit{Resource: 8, Cur: 10, Max: 5}),
		"unknown backend": cage.WithBackend(cage.Backend(9)),
	}
	for name, o := range tests {
		if _, err := cage.New(mustPolicy(t), append(simOpts(t), o)...); err == nil {
			t.Errorf("%s: New accepted an invalid option", name)
		}
	}
	if _, err := cage.New(profile.Policy{}, simOpts(t)...); err == nil {
		t.Error("New accepted a zero Policy")
	}
}

func TestRunMarker(t *testing.T) {
	prefix := cage.RunPrefix()
	if !strings.HasPrefix(prefix, "org.procage.run.") || !strings.HasSuffix(prefix, ".") {
		t.Fatalf("prefix %q, want org.procage.run.<random>.", prefix)
	}
	seen := map[string]bool{}
	for range 100 {
		m := cage.NewMarker()
		rest, ok := strings.CutPrefix(m, prefix)
		if !ok {
			t.Fatalf("marker %q lacks the prefix %q", m, prefix)
		}
		pid, _, _ := strings.Cut(rest, ".")
		if want := strconv.Itoa(os.Getpid()); pid != want {
			t.Errorf("marker %q: pid part %q, want %q", m, pid, want)
		}
		if seen[m] {
			t.Fatalf("marker %q reused", m)
		}
		seen[m] = true
	}
	sib := cage.SiblingName()
	if !strings.HasPrefix(sib, prefix) || seen[sib] {
		t.Errorf("sibling %q must share the prefix and be no marker", sib)
	}
}

func TestApplyVerdict(t *testing.T) {
	exited := func(code int) syscall.WaitStatus { return syscall.WaitStatus(code << 8) }
	killed := syscall.WaitStatus(syscall.SIGKILL)
	tests := []struct {
		name    string
		err     error
		status  syscall.WaitStatus
		waitErr error
		want    string // "ok", "unsupported" (a cached verdict) or "transient"
	}{
		{"exec refused with EPERM", &cage.ApplyError{Step: cage.StepExec, Errno: syscall.EPERM}, 0, nil, "ok"},
		{"exec refused with EACCES is not Seatbelt's answer", &cage.ApplyError{Step: cage.StepExec, Errno: syscall.EACCES}, 0, nil, "unsupported"},
		{"signalled child is no proof", nil, killed, nil, "unsupported"},
		{"target ran and exited 0", nil, exited(0), nil, "unsupported"},
		{"target ran and exited 1", nil, exited(1), nil, "unsupported"},
		{"apply step failed", &cage.ApplyError{Step: cage.StepApply, Errno: syscall.EINVAL}, 0, nil, "unsupported"},
		{"confirm step failed", &cage.ApplyError{Step: cage.StepConfirm, Errno: syscall.EPERM}, 0, nil, "unsupported"},
		{"exec failed otherwise", &cage.ApplyError{Step: cage.StepExec, Errno: syscall.ENOENT}, 0, nil, "unsupported"},
		{"fork failed", syscall.EAGAIN, 0, nil, "transient"},
		{"wait failed", nil, 0, syscall.EINTR, "transient"},
	}
	for _, tt := range tests {
		err := cage.ApplyVerdict("macOS 25A1", tt.err, tt.status, tt.waitErr)
		got := "transient"
		switch {
		case err == nil:
			got = "ok"
		case errors.Is(err, errors.ErrUnsupported):
			got = "unsupported"
			var ue *cage.UnsupportedError
			if !errors.As(err, &ue) || ue.OSBuild != "macOS 25A1" || ue.What == "" {
				t.Errorf("%s: %v does not name the build and what was seen", tt.name, err)
			}
		}
		if got != tt.want {
			t.Errorf("%s: verdict %v (%s), want %s", tt.name, err, got, tt.want)
		}
	}
	// What was seen is named.
	err := cage.ApplyVerdict("macOS 25A1", nil, killed, nil)
	if ue := (*cage.UnsupportedError)(nil); !errors.As(err, &ue) || !strings.Contains(ue.What, "signal") {
		t.Errorf("signalled probe child: %v, want the signal named", err)
	}
}

func TestMarkerVerdict(t *testing.T) {
	tests := []struct {
		name                  string
		markerDenied, sibling bool
		err                   error
		works                 bool
	}{
		{"run process splits", false, true, nil, true},
		{"unsandboxed allows both", false, false, nil, false},
		{"foreign sandbox denies both", true, true, nil, false},
		{"query failed", false, true, syscall.ESRCH, false},
	}
	for _, tt := range tests {
		err := cage.MarkerVerdict("macOS 25A1", tt.markerDenied, tt.sibling, tt.err)
		if (err == nil) != tt.works {
			t.Errorf("%s: verdict %v, want works=%v", tt.name, err, tt.works)
		}
		if err != nil && !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: %v is not unsupported", tt.name, err)
		}
	}
}

func TestProbeResultString(t *testing.T) {
	ok := cage.ProbeResult{OSBuild: "macOS 25A1", Sandbox: cage.SandboxSeatbelt}
	if ok.Err() != nil || ok.String() != "macOS 25A1: Seatbelt apply ok; run-marker query ok" {
		t.Errorf("String() = %q, Err() = %v", ok.String(), ok.Err())
	}
	bad := cage.ProbeResult{OSBuild: "macOS 25A1", Sandbox: cage.SandboxSeatbelt, RunSearch: &cage.UnsupportedError{OSBuild: "macOS 25A1", What: "x"}}
	if !errors.Is(bad.Err(), errors.ErrUnsupported) || !strings.Contains(bad.String(), "run-marker query FAILED") {
		t.Errorf("String() = %q, Err() = %v", bad.String(), bad.Err())
	}
	// Linux finds a run's processes as its process group: nothing to query,
	// so nothing said about it.
	linux := cage.ProbeResult{OSBuild: "Linux 6.18.1", Sandbox: cage.SandboxLinux}
	if s := linux.String(); s != "Linux 6.18.1: Landlock+seccomp apply ok" {
		t.Errorf("String() = %q", s)
	}
	if s := cage.Probe().Sandbox; runtime.GOOS == "linux" && s != cage.SandboxLinux || runtime.GOOS == "darwin" && s != cage.SandboxSeatbelt {
		t.Errorf("Probe().Sandbox = %q on %s", s, runtime.GOOS)
	}
}

func TestCageString(t *testing.T) {
	c, err := cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(&countingCompiler{}), cage.WithTTY(cage.TTYInherit), cage.WithEnvAllowlist("PATH", "HOME"))...)
	if err != nil {
		t.Fatal(err)
	}
	s := c.String()
	for _, want := range []string{"tty inherit", "env allowlist[HOME PATH]", "base v1"} {
		if !strings.Contains(s, want) {
			t.Errorf("String() = %q lacks %q", s, want)
		}
	}
}

// TestCachedVerdict: a probe's verdict (success or unsupported) is kept; a
// passing failure is not, so the probe runs again.
func TestCachedVerdict(t *testing.T) {
	transient := errors.New("too many open files")
	answers := []error{transient, transient, &cage.UnsupportedError{OSBuild: "test", What: "no apply"}, nil}
	calls := 0
	probe := cage.CachedVerdict(func() error {
		err := answers[calls]
		calls++
		return err
	})
	for i, want := range []error{transient, transient} {
		if err := probe(); err != want {
			t.Fatalf("call %d = %v, want the transient error", i, err)
		}
	}
	for range 3 {
		if err := probe(); !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("after the verdict: %v, want the cached UnsupportedError", err)
		}
	}
	if calls != 3 {
		t.Errorf("probe ran %d times, want 3 (two transient failures, then the verdict)", calls)
	}
	ok := cage.CachedVerdict(func() error { calls++; return nil })
	calls = 0
	ok()
	ok()
	if calls != 1 {
		t.Errorf("a successful probe ran %d times, want once", calls)
	}
}

// TestExecTargetOnlyParams: an ExecTargetOnly policy binds the target per
// spawn, in kernel spelling; New's early compile binds placeholders.
func TestExecTargetOnlyParams(t *testing.T) {
	comp := &countingCompiler{}
	pol := mustPolicy(t, profile.ExecTargetOnly(), profile.Fork())
	c, err := cage.New(pol, simOpts(t, cage.WithCompiler(comp))...)
	if err != nil {
		t.Fatal(err)
	}
	if comp.count() != 1 {
		t.Fatalf("New compiled %d times, want 1", comp.count())
	}
	keys := func(ps []libsandbox.Param) map[string]string {
		m := map[string]string{}
		for _, p := range ps {
			m[p.Key] = p.Value
		}
		return m
	}
	early := keys(comp.params[0])
	if early[seatbelt.ParamExecTarget] != "/usr/bin/true" || early[seatbelt.ParamRunMarker] == "" {
		t.Errorf("New's compile bound %v, want placeholder values for every parameter", early)
	}
	got := keys(c.SpawnParams("/private/tmp/tool", "m1", ""))
	want := map[string]string{seatbelt.ParamExecTarget: "/private/tmp/tool", seatbelt.ParamRunPrefix: cage.RunPrefix(), seatbelt.ParamRunMarker: "m1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SpawnParams (-want +got):\n%s", diff)
	}

	// Start resolves the target as the kernel sees it before anything runs.
	cmd := c.Command(context.Background(), "/tmp/tool")
	_ = cmd.Start() // unsupported off macOS; on macOS the probe would run first
	if runtime.GOOS != "darwin" && cmd.ExecTarget() != "/private/tmp/tool" {
		t.Errorf("target bound as %q, want /private/tmp/tool", cmd.ExecTarget())
	}
	plainCage, err := cage.New(mustPolicy(t), simOpts(t, cage.WithCompiler(&countingCompiler{}))...)
	if err != nil {
		t.Fatal(err)
	}
	if plain := keys(plainCage.SpawnParams("/x", "m", "/t")); len(plain) != 0 {
		t.Errorf("a policy without per-spawn parameters binds %v", plain)
	}

	// A private temporary directory is bound per spawn: a run may execute
	// what it wrote there, as on Linux.
	tempComp := &countingCompiler{}
	tempCage, err := cage.New(mustPolicy(t), simOpts(t, cage.WithCompiler(tempComp), cage.WithPrivateTemp())...)
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(tempCage.SpawnParams("/x", "m", "/private/tmp/procage-run-1")); got[seatbelt.ParamPrivateTemp] != "/private/tmp/procage-run-1" || len(got) != 1 {
		t.Errorf("a private temporary directory binds %v, want only %s", got, seatbelt.ParamPrivateTemp)
	}
	if !strings.Contains(tempCage.Plan(), `(allow process-exec* file-map-executable (subpath (param "PROCAGE_PRIVATE_TEMP")))`) {
		t.Errorf("the plan of a cage with a private temporary directory does not let the run execute there:\n%s", tempCage.Plan())
	}
}

// TestErrorsWrapOnce: an error from another package (pathresolve,
// profile) is returned with its own prefix, not under "cage: " again.
func TestErrorsWrapOnce(t *testing.T) {
	_, homeErr := cage.New(mustPolicy(t), append(simOpts(t), cage.WithHome("home/me"))...)
	_, limitErr := cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(&countingCompiler{}), cage.WithCompileLimit(3))...)
	c, err := cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(&countingCompiler{}))...)
	if err != nil {
		t.Fatal(err)
	}
	cmd := c.Command(t.Context(), "/usr/bin/true")
	cmd.Grants = []cage.Grant{{Path: "rel"}}
	grantErr := cmd.Start()
	var pe *pathresolve.PathError
	var le *seatbelt.LimitError
	for name, tt := range map[string]struct {
		err error
		as  bool
	}{
		"home":  {homeErr, errors.As(homeErr, &pe)},
		"limit": {limitErr, errors.As(limitErr, &le)},
		"grant": {grantErr, errors.As(grantErr, &pe)},
	} {
		if !tt.as {
			t.Errorf("%s: %v is not the typed error", name, tt.err)
			continue
		}
		for _, pile := range []string{"cage: cage:", "cage: pathresolve:", "cage: profile:"} {
			if strings.Contains(tt.err.Error(), pile) {
				t.Errorf("%s: %q piles up prefixes (%q)", name, tt.err, pile)
			}
		}
	}
}

// TestBackendChoice: the default is the host's backend (a test compiler
// means Seatbelt); WithBackend picks either, and the plan follows it.
func TestBackendChoice(t *testing.T) {
	for _, b := range []cage.Backend{cage.BackendMacOS, cage.BackendLinux} {
		c, err := cage.New(mustPolicy(t), cage.WithBackend(b), cage.WithHome("/home/me"),
			cage.WithSandboxCheck(func() (bool, error) { return false, nil }))
		if err != nil {
			skipIfTooOld(t, err) // on Linux, BackendLinux is the host's: New enforces
			t.Fatalf("New for %v: %v", b, err)
		}
		if c.Backend() != b {
			t.Errorf("Backend() = %v, want %v", c.Backend(), b)
		}
		if got := c.SeatbeltPlan() != nil; got != (b == cage.BackendMacOS) {
			t.Errorf("%v: SeatbeltPlan() non-nil = %v; want the Seatbelt rules for macOS only", b, got)
		}
	}
	if got := []string{cage.BackendMacOS.String(), cage.BackendLinux.String()}; !slicesEqual(got, []string{"macos", "linux"}) {
		t.Errorf("names %q", got)
	}
	c, err := cage.New(mustPolicy(t), cage.WithHome("/home/me"), cage.WithSandboxCheck(func() (bool, error) { return false, nil }))
	if err != nil {
		t.Fatal(err)
	}
	if c.Backend() != cage.HostBackend() {
		t.Errorf("default Backend() = %v, want the host's %v", c.Backend(), cage.HostBackend())
	}
	if want := map[string]cage.Backend{"darwin": cage.BackendMacOS, "linux": cage.BackendLinux}[runtime.GOOS]; want != 0 && cage.HostBackend() != want {
		t.Errorf("HostBackend() = %v on %s", cage.HostBackend(), runtime.GOOS)
	}
}

func slicesEqual(a, b []string) bool { return cmp.Equal(a, b) }

// The caller's $ZDOTDIR, resolved, reaches the trust-handoff class: zsh
// reads the user's startup files there.
func TestZDotDirProtected(t *testing.T) {
	t.Setenv("ZDOTDIR", "/tmp/zdot/")
	c, err := cage.New(mustPolicy(t, profile.ReadWrite("/tmp")), append(simOpts(t), cage.WithCompiler(&countingCompiler{}))...)
	if err != nil {
		t.Fatal(err)
	}
	if want := `(literal "/private/tmp/zdot/.zshrc")`; !strings.Contains(c.Plan(), want) {
		t.Errorf("plan lacks %s", want)
	}
	t.Setenv("ZDOTDIR", "relative")
	c, err = cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(&countingCompiler{}))...)
	if err != nil {
		t.Fatalf("a relative ZDOTDIR: %v", err)
	}
	if strings.Contains(c.Plan(), "relative") {
		t.Error("a relative ZDOTDIR reached the plan")
	}
}

// A link planted by one run does not redirect a later policy path or
// grant (issue 12 item 3): proj/build/cache -> the home directory.
func TestPlantedLinkRefused(t *testing.T) {
	const home = macfs.Home
	fsys := simFS(t)
	if err := fsys.MkdirAll(home + "/project/build"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Symlink(home, home+"/project/build/cache"); err != nil {
		t.Fatal(err)
	}
	opts := func(extra ...cage.Option) []cage.Option {
		return append([]cage.Option{
			cage.WithFS(fsys, fsys.Firmlinks()), cage.WithHome(home),
			cage.WithSandboxCheck(func() (bool, error) { return false, nil }), cage.WithCompiler(&countingCompiler{}),
		}, extra...)
	}
	pol := mustPolicy(t, profile.ReadWrite(home+"/project"), profile.ReadWrite(home+"/project/build/cache"))
	_, err := cage.New(pol, opts()...)
	var le *pathresolve.LinkError
	if !errors.As(err, &le) || !errors.Is(err, cage.ErrSuspectLink) || le.Link != home+"/project/build/cache" || le.Resolved != home {
		t.Fatalf("New through a planted link = %v, want a *LinkError naming the link", err)
	}
	if pe, ok := errors.AsType[*cage.PolicyError](err); !ok || pe.Kind != cage.ErrSuspectLink || pe.Path != home+"/project/build/cache" {
		t.Errorf("New through a planted link = %#v, want a *PolicyError of kind ErrSuspectLink naming the policy path", err)
	}
	c, err := cage.New(pol, opts(cage.AcceptLink(home+"/project/build/cache"))...)
	if err != nil {
		t.Fatalf("New with the link accepted: %v", err)
	}
	if !strings.Contains(c.Plan(), `(subpath "/Users/me")`) {
		t.Errorf("the accepted link's target is not in the plan")
	}
	// What the refusal prevents: through the link, the whole home directory
	// is writable (simulator).
	d, err := sim.Decide(c.SeatbeltPlan().Profile, sim.Access{Op: "file-write-data", Path: home + "/notes.txt"})
	if err != nil || !d.Allowed {
		t.Errorf("with the link accepted, writing the home directory: %v, %v; the canary no longer shows the redirect", d, err)
	}

	// The same link as a grant of a spawn.
	c, err = cage.New(mustPolicy(t, profile.ReadWrite(home+"/project")), opts()...)
	if err != nil {
		t.Fatal(err)
	}
	cmd := c.Command(t.Context(), "/usr/bin/true")
	cmd.Grants = []cage.Grant{{Path: home + "/project/build/cache", Write: true}}
	if err := cmd.Start(); !errors.As(err, &le) {
		t.Errorf("Start with a grant through a planted link = %v, want a *LinkError", err)
	}
	if _, err := cage.New(pol, opts(cage.AcceptLink("relative"))...); err == nil {
		t.Error("AcceptLink with a relative path was accepted")
	}
}

// Red team of issue 12: a tree the Seatbelt layer lets the child write is a
// tree a child could plant a link in, like a policy tree.
func TestPlantedLinkInSeatbeltTree(t *testing.T) {
	const home = macfs.Home
	fsys := simFS(t)
	for _, d := range []string{home + "/project", home + "/tmpl", "/Volumes/ext/data"} {
		if err := fsys.MkdirAll(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.Symlink("/Volumes/ext/data", home+"/project/data"); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Symlink("/Volumes/ext/data", home+"/tmpl/data"); err != nil {
		t.Fatal(err)
	}
	opts := []cage.Option{
		cage.WithFS(fsys, fsys.Firmlinks()), cage.WithHome(home),
		cage.WithSandboxCheck(func() (bool, error) { return false, nil }), cage.WithCompiler(&countingCompiler{}),
	}
	for _, tc := range []struct {
		name, rules string
	}{
		{"subpath", `(allow file-read* file-write* (subpath "` + home + `/project"))
(allow file-read* (subpath "` + home + `/project/data"))`},
		{"nested subpath, concrete write", `(allow file-write-create (require-any (subpath "` + home + `/project")))
(allow file-read* (literal "` + home + `/project/data"))`},
		{"prefix", `(allow file-write* (prefix "` + home + `/proj"))
(allow file-read* (subpath "` + home + `/project/data"))`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cage.New(mustPolicy(t, profile.Seatbelt(tc.rules)), opts...)
			var le *pathresolve.LinkError
			if !errors.As(err, &le) || le.Link != home+"/project/data" || !le.Writable {
				t.Errorf("New = %v, want a *LinkError naming the link in a writable tree", err)
			}
		})
	}
	// A read-only Seatbelt tree holding a link that leads out is refused
	// too, and a tree nothing grants still passes.
	_, err := cage.New(mustPolicy(t, profile.Seatbelt(`(allow file-read* (subpath "`+home+`/tmpl"))
(allow file-read* (subpath "`+home+`/tmpl/data"))`)), opts...)
	var le *pathresolve.LinkError
	if !errors.As(err, &le) || le.Writable {
		t.Errorf("read-only Seatbelt tree: New = %v, want a *LinkError (not writable)", err)
	}
	if _, err := cage.New(mustPolicy(t, profile.Seatbelt(`(allow file-read* (subpath "`+home+`/tmpl/data"))`)), opts...); err != nil {
		t.Errorf("a link outside every tree: New = %v, want it accepted", err)
	}
}

// The trust-handoff class protects git's and the shells' configuration in
// the caller's $XDG_CONFIG_HOME, in kernel spelling.
func TestXDGConfigHomeProtected(t *testing.T) {
	t.Setenv("ZDOTDIR", "")
	t.Setenv("XDG_CONFIG_HOME", "/tmp/xdg/")
	c, err := cage.New(mustPolicy(t, profile.ReadWrite("/tmp")), append(simOpts(t), cage.WithCompiler(&countingCompiler{}))...)
	if err != nil {
		t.Fatal(err)
	}
	if want := `(subpath "/private/tmp/xdg/git")`; !strings.Contains(c.Plan(), want) {
		t.Errorf("plan lacks %s", want)
	}
	t.Setenv("XDG_CONFIG_HOME", "relative")
	c, err = cage.New(mustPolicy(t), append(simOpts(t), cage.WithCompiler(&countingCompiler{}))...)
	if err != nil {
		t.Fatalf("a relative XDG_CONFIG_HOME: %v", err)
	}
	if strings.Contains(c.Plan(), "relative") {
		t.Error("a relative XDG_CONFIG_HOME reached the plan")
	}
}

// TestPolicyErrorText: one "cage: " prefix, whatever the detail says, and a
// PolicyError without detail still reads (it used to panic).
func TestPolicyErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  *cage.PolicyError
		want string
	}{
		{&cage.PolicyError{Kind: cage.ErrGap}, cage.ErrGap.Error()},
		{&cage.PolicyError{Kind: cage.ErrSuspectLink, Err: &pathresolve.LinkError{Path: "/p/x", Link: "/p/x", Resolved: "/p"}}, "cage: "},
		{&cage.PolicyError{Kind: cage.ErrPathChanged, Err: fmt.Errorf("cage: /x: %w", cage.ErrPathChanged)}, "cage: /x: " + cage.ErrPathChanged.Error()},
	} {
		got := tc.err.Error()
		if !strings.HasPrefix(got, tc.want) || strings.Count(got, "cage: ") != 1 || strings.Contains(got, "pathresolve: ") {
			t.Errorf("%#v.Error() = %q, want it to start %q with one package prefix", tc.err, got, tc.want)
		}
		if !errors.Is(tc.err, tc.err.Kind) {
			t.Errorf("errors.Is(%q, its Kind) = false", got)
		}
	}
}
