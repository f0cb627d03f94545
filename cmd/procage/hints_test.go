package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/procage-go/procage/cage"
)

// TestErrorsSayWhatToType (issue 24): each refusal procage can make from
// the command line alone is one line on stderr naming what is wrong and
// what to type instead, and exit status 125; nothing goes to stdout.
func TestErrorsSayWhatToType(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--network", "loopback"},
			"procage plan: --network loopback: name each localhost port it may use with --port N (or allow every port: --port any)\n"},
		{[]string{"run", "--network", "loopback", "--", "/bin/true"},
			"procage run: --network loopback: name each localhost port it may use with --port N (or allow every port: --port any)\n"},
		{[]string{"run", "--env", "NOVALUE", "--", "/bin/true"}, "procage run: --env NOVALUE: want KEY=VALUE, e.g. --env LANG=C.UTF-8\n"},
		{[]string{"run", "--env", "=x", "--", "/bin/true"}, "procage run: --env =x: want KEY=VALUE, e.g. --env LANG=C.UTF-8\n"},
		{[]string{"run", "--env", "A=\x00", "--", "/bin/true"}, "procage run: --env $'A=\\x00': want KEY=VALUE, e.g. --env LANG=C.UTF-8\n"},
		{[]string{"run", "--env-allow", "A=B", "--", "/bin/true"}, "procage run: --env-allow A=B: want a variable name, e.g. --env-allow PATH\n"},
		{[]string{"run", "--env-allow", "", "--", "/bin/true"}, "procage run: --env-allow '': want a variable name, e.g. --env-allow PATH\n"},
		{[]string{"run", "--timeout", "5", "--", "/bin/true"},
			"procage run: --timeout \"5\": want a duration such as 90s, 5m or 1h30m\nsee 'procage run --help'\n"},
		{[]string{"run", "--timeout", "-1s", "--", "/bin/true"},
			"procage run: --timeout \"-1s\": want a duration such as 90s, 5m or 1h30m\nsee 'procage run --help'\n"},
		{[]string{"plan", "--read", "~bob/src"}, "procage plan: --read '~bob/src': only a leading ~ or ~/ is expanded (to $HOME); give the path in full\n"},
		{[]string{"plan", "--read", "src/../x"}, "procage plan: --read src/../x (" + wd + "/src/../x): path is not normalised (no \".\", \"..\", \"//\" or trailing slash)\n"},
		{[]string{"plan", "--home", "a/../b"}, "procage plan: --home a/../b (" + wd + "/a/../b): path is not normalised\n"},
		{[]string{"plan", "--accept-link", "/a/../b"}, "procage plan: --accept-link /a/../b: path is not normalised\n"},
		{[]string{"run", "--grant", "~bob", "--", "/bin/true"}, "procage run: --grant '~bob': only a leading ~ or ~/ is expanded (to $HOME); give the path in full\n"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, tt.args...)
		if code != exitFailure || out != "" || errs != tt.want {
			t.Errorf("procage %q: exit %d, stdout %q, stderr %q; want 125, nothing, %q", tt.args, code, out, errs, tt.want)
		}
	}

	t.Setenv("HOME", "relative")
	want := "procage plan: --read '~/src': $HOME is not an absolute path (\"relative\"), so ~ cannot be expanded\n"
	if code, out, errs := runCLI(t, "plan", "--read", "~/src"); code != exitFailure || out != "" || errs != want {
		t.Errorf("with HOME=relative: exit %d, stdout %q, stderr %q; want 125, nothing, %q", code, out, errs, want)
	}
}

// realTempDir is t.TempDir in its kernel spelling (on macOS /var is a
// link to /private/var).
func realTempDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// planPolicy runs plan --backend linux --json with args and returns the
// policy's fs subpaths and the protected home, or fails the test.
func planPolicy(t *testing.T, args ...string) (subpaths []string, home string) {
	t.Helper()
	code, out, errs := runCLI(t, append([]string{"plan", "--backend", "linux", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("plan %q: exit %d, stderr %q", args, code, errs)
	}
	var got struct {
		Home   string
		Policy struct {
			FS []struct{ Subpath string }
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	for _, r := range got.Policy.FS {
		subpaths = append(subpaths, r.Subpath)
	}
	return subpaths, got.Home
}

// TestPathFlagsResolved (issue 24): relative paths and a leading ~ in path
// flags reach the library absolute, from the working directory (as the
// shell spells it: the cage resolves links itself) and $HOME; a leading
// ".." climbs from the directory's kernel spelling, as the kernel would.
func TestPathFlagsResolved(t *testing.T) {
	dir := realTempDir(t)
	for _, d := range []string{"proj/src", "home/.cache"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "proj"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(dir, "home"))
	t.Chdir(filepath.Join(dir, "link", "src"))
	for _, tt := range []struct {
		flag, value, want string
	}{
		{"--read", ".", dir + "/link/src"},
		{"--read", "./x/", dir + "/link/src/x"},
		{"--exec", "..", dir + "/proj"},
		{"--write", "../../home/.cache", dir + "/home/.cache"},
		{"--read", "~", dir + "/home"},
		{"--read", "~/.cache", dir + "/home/.cache"},
	} {
		got, _ := planPolicy(t, tt.flag+"="+tt.value, "--waive", "trust-handoff", "--waive", "secrets")
		if len(got) != 1 || got[0] != tt.want {
			t.Errorf("%s=%s: the policy has %q, want %s", tt.flag, tt.value, got, tt.want)
		}
	}
	if _, home := planPolicy(t, "--home", "~/.cache"); home != dir+"/home/.cache" {
		t.Errorf("--home ~/.cache: the plan protects %s, want %s", home, dir+"/home/.cache")
	}
}

// TestRefusedPolicyNamesFlag (issue 24): a refused gap names --accept-gap,
// a suspect link --accept-link with the path that accepts it, in one line
// and exit status 125 (plan shows a plan with gaps all the same, exit 0,
// the line a warning); the flag named then lets the policy through.
func TestRefusedPolicyNamesFlag(t *testing.T) {
	tree, out := realTempDir(t), realTempDir(t)
	if err := os.Symlink(out, filepath.Join(tree, "l")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
		fix  []string
	}{
		{[]string{"--write", tree},
			"procage plan: warning: run refuses this plan: linux cannot enforce trust-handoff-inside-writable-tree: trust-handoff protects .git inside the writable tree " + tree +
				" (to run it unenforced: --accept-gap trust-handoff-inside-writable-tree; or give up the protection: --waive trust-handoff)\n",
			[]string{"--accept-gap", "trust-handoff-inside-writable-tree"}},
		{[]string{"--read", tree, "--read", tree + "/l/x"},
			"procage plan: " + tree + "/l/x resolves through the link " + tree + "/l inside the tree " + tree + ", out of it to " + out +
				"/x, as a link a caged run planted would (if you trust the link: --accept-link " + tree + "/l)\n",
			[]string{"--accept-link", tree + "/l"}},
	}
	for _, tt := range tests {
		args := append([]string{"plan", "--backend", "linux", "--tier", "t2"}, tt.args...)
		code, stdout, errs := runCLI(t, args...)
		if strings.Contains(tt.want, ": warning: ") {
			if code != 0 || !strings.Contains(stdout, "\nREFUSED GAP (not accepted) ") || errs != tt.want {
				t.Errorf("procage %q: exit %d, stdout %q, stderr %q; want 0, the plan with its refused gap, %q", args, code, stdout, errs, tt.want)
			}
		} else if code != exitFailure || stdout != "" || errs != tt.want {
			t.Errorf("procage %q: exit %d, stdout %q, stderr %q; want 125, nothing, %q", args, code, stdout, errs, tt.want)
		}
		if code, _, errs := runCLI(t, append(args, tt.fix...)...); code != 0 {
			t.Errorf("procage %q %q: exit %d, stderr %q; want the plan", args, tt.fix, code, errs)
		}
	}
	// --accept-link takes the link's path relative to the working directory.
	t.Chdir(tree)
	if code, _, errs := runCLI(t, "plan", "--backend", "linux", "--read", tree, "--read", "l/x", "--accept-link", "l"); code != 0 {
		t.Errorf("--accept-link l in %s: exit %d, stderr %q", tree, code, errs)
	}
}

// TestRunEndFailure: a run whose processes may not all have ended (or whose
// private TMPDIR was left behind) is a failure of procage, 125, whatever
// the command's own status, in one line naming both.
func TestRunEndFailure(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{errors.Join(errors.New("exit status 3"), fmt.Errorf("%w: could not check processes 12 13: boom", cage.ErrRunNotEnded)),
			"exit status 3; run not ended: could not check processes 12 13: boom"},
		{errors.Join(nil, fmt.Errorf("%w: remove /tmp/r: busy", cage.ErrTempNotRemoved)),
			"private temporary directory not removed: remove /tmp/r: busy"},
	} {
		code, err := exitStatus(nil, nil, nil, nil, tt.err)
		if code != exitFailure || err == nil || describe(err) != tt.want {
			t.Errorf("exitStatus(%q) = %d, %v; want 125, %q", tt.err, code, err, tt.want)
		}
	}
}

// TestExecVerdictMacPlan: on a macOS plan (the simulated Mac off macOS)
// an exec refusal is explained by procage's model of Seatbelt: --exec for
// a program no rule allows, the deciding layer where a rule denies it.
func TestExecVerdictMacPlan(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("the plan resolves against this Mac, not the simulated one")
	}
	t.Setenv("USER", "me")
	denied := &cage.ApplyError{Step: cage.StepExec, Errno: syscall.EPERM}
	for _, tt := range []struct {
		flags []string
		prog  string
		want  string
	}{
		{nil, "/Users/me/bin/tool", "/Users/me/bin/tool: the cage does not allow executing it; to allow it: --exec /Users/me/bin"},
		{[]string{"--exec", "/Users/me/bin"}, "/Users/me/bin/tool", "/Users/me/bin/tool: executing it was refused (operation not permitted), though the cage's rules allow it"},
		{[]string{"--exec", "/Users/me/bin", "--exec-target-only"}, "/Users/me/bin/tool", "/Users/me/bin/tool: executing it was refused (operation not permitted), though the cage's rules allow it"},
		{nil, "/tmp/x/tool", "/tmp/x/tool (/private/tmp/x/tool to the kernel): the cage does not allow executing it; to allow it: --exec /private/tmp/x"},
	} {
		var pf policyFlags
		fs := newFlagSet("run", "", io.Discard)
		pf.register(fs)
		if err := fs.parse(tt.flags); err != nil {
			t.Fatal(err)
		}
		b, err := newBackend("macos")
		if err != nil {
			t.Fatal(err)
		}
		c, err := prepare(&pf, fs, b, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cmd := c.Command(t.Context(), tt.prog)
		if got := describe(execDenied(c, b, &pf, cmd, denied)); got != tt.want {
			t.Errorf("%q, exec %s refused: %q, want %q", tt.flags, tt.prog, got, tt.want)
		}
		// A target's #! interpreter is another program: exec-target-only
		// denies it by a rule, which --exec would not lift.
		if pf.execOnly {
			want := verdict{known: true, layer: "exec-target-only"}
			if got := execVerdict(c, "/bin/sh", tt.prog); got != want {
				t.Errorf("%q, exec /bin/sh: %+v, want %+v", tt.flags, got, want)
			}
		}
	}
}
