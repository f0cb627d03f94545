package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunLinuxForkHint (issue 24): a program that starts others (a shell)
// failing under a policy without fork gets one hint naming --fork (with
// --policy, the key to set), after its own "Cannot fork"; its exit status
// stands. A program that is no such starter, a forking policy and a run
// that succeeded get none.
func TestRunLinuxForkHint(t *testing.T) {
	policy := filepath.Join(realTempDir(t), "p.json")
	if err := os.WriteFile(policy, []byte(`{"version": 1, "base": "v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	hint := `procage run: hint: sh exited with status 2, and the cage does not let it create processes: if that is why (sh: "Cannot fork", "fork: Operation not permitted"), allow it: `
	tests := []struct {
		args []string
		code int
		hint string // "": no hint line
	}{
		{[]string{"--", "sh", "-c", "ls / | wc -l"}, 2, hint + "--fork\n"},
		{[]string{"--policy", policy, "--", "sh", "-c", "ls / | wc -l"}, 2, hint + `set "fork": true in ` + policy + "\n"},
		{[]string{"--fork", "--", "sh", "-c", "ls / | wc -l >/dev/null"}, 0, ""},
		{[]string{"--fork", "--", "sh", "-c", "exit 2"}, 2, ""},
		{[]string{"--", "/bin/false"}, 1, ""},
		{[]string{"--", "sh", "-c", "exit 0"}, 0, ""},
	}
	for _, tt := range tests {
		code, _, errs := runCLI(t, append([]string{"run"}, tt.args...)...)
		lines := strings.SplitAfter(errs, "\n")
		last := lines[len(lines)-1]
		if last == "" && len(lines) > 1 {
			last = lines[len(lines)-2]
		}
		got := ""
		if strings.HasPrefix(last, "procage run: hint: ") {
			got = last
		}
		if code != tt.code || got != tt.hint || strings.Count(errs, "hint:") > 1 {
			t.Errorf("run %q: exit %d, stderr %q; want %d and the hint %q", tt.args, code, errs, tt.code, tt.hint)
		}
		if tt.hint != "" && !strings.Contains(errs, "ork") {
			t.Errorf("run %q: stderr %q: the shell's own fork failure is missing", tt.args, errs)
		}
	}
}

// TestRunLinuxVersionShim (issue 24): python3 found through a pyenv-style
// shim (a fake tree in a stand-in HOME: the shim runs ROOT/libexec/pyenv,
// which forks to read the version and runs ROOT/versions/V/bin/python3):
// refused, and after each partial fix, the hint names the manager's root
// with --exec and --fork (or the python preset), and that fix runs it.
func TestRunLinuxVersionShim(t *testing.T) {
	home := realTempDir(t)
	root := filepath.Join(home, ".pyenv")
	files := map[string]string{
		"shims/python3":            "#!/bin/sh\nexec \"" + root + "/libexec/pyenv\" exec python3 \"$@\"\n",
		"libexec/pyenv":            "#!/bin/sh\nshift; prog=$1; shift\nv=$(cat \"" + root + "/version\")\nexec \"" + root + "/versions/$v/bin/$prog\" \"$@\"\n",
		"versions/9.9/bin/python3": "#!/bin/sh\necho \"fake python $*\"\n",
		"version":                  "9.9\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	t.Setenv("PYENV_ROOT", "")
	t.Setenv("PATH", filepath.Join(root, "shims")+":"+os.Getenv("PATH"))
	note := "it is pyenv's shim, a script that runs the real program from " + root + " in new processes: to allow it: --exec " + root + " --fork (or --preset python)\n"
	shim := filepath.Join(root, "shims", "python3")
	tests := []struct {
		flags []string
		code  int
		last  string // the last line of stderr
	}{
		{nil, 126, "procage run: python3 (" + shim + " in PATH): the cage does not allow executing it; " + note},
		{[]string{"--exec", filepath.Join(root, "shims")}, 126, "procage run: hint: python3 exited with status 126; " + note},
		{[]string{"--exec", root}, 2, "procage run: hint: python3 exited with status 2; " + note},
	}
	for _, tt := range tests {
		args := append(append([]string{"run"}, tt.flags...), "--", "python3", "p.py")
		code, out, errs := runCLI(t, args...)
		lines := strings.SplitAfter(strings.TrimSuffix(errs, "\n"), "\n")
		if last := lines[len(lines)-1] + "\n"; code != tt.code || out != "" || last != tt.last {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d and the last line %q", args, code, out, errs, tt.code, tt.last)
		}
	}
	for _, fix := range [][]string{{"--exec", root, "--fork"}, {"--preset", "python"}} {
		args := append(append([]string{"run"}, fix...), "--", "python3", "p.py")
		if code, out, errs := runCLI(t, args...); code != 0 || out != "fake python p.py\n" || strings.Contains(errs, "hint") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0 and the fake python's line", args, code, out, errs)
		}
	}
}

// TestRunLinuxSavedPlan (issue 24): the output of plan --json, saved as
// it is, runs with --policy as the plan was made: the gap it accepted
// stays accepted (without it the same policy is refused).
func TestRunLinuxSavedPlan(t *testing.T) {
	dir := realTempDir(t)
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "notes"), []byte("n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// T2: at T1 a home read is no gap (the stores are hidden).
	flags := []string{"--tier", "t2", "--home", home, "--read", home}
	if code, _, errs := runCLI(t, append(append([]string{"run"}, flags...), "--", "/bin/true")...); code != exitFailure || !strings.Contains(errs, "--accept-gap secrets-inside-allowed-tree") {
		t.Fatalf("run without the gap accepted: exit %d, stderr %q; want %d naming --accept-gap", code, errs, exitFailure)
	}
	code, out, errs := runCLI(t, append(append([]string{"plan", "--json"}, flags...), "--accept-gap", "secrets-inside-allowed-tree")...)
	if code != 0 {
		t.Fatalf("plan --json: exit %d, stderr %q", code, errs)
	}
	saved := filepath.Join(dir, "saved.json")
	if err := os.WriteFile(saved, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "run", "--policy", saved, "--", "/bin/sh", "-c", `read x < "$0" && echo "$x"`, filepath.Join(home, "notes"))
	if code != 0 || out != "n\n" {
		t.Errorf("run --policy (plan --json's output): exit %d, stdout %q, stderr %q; want 0 and the file", code, out, errs)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"backend": "linux", "policy": {"version": 1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI(t, "run", "--policy", bad, "--", "/bin/true"); code != exitFailure || !strings.Contains(errs, `bad.json ("policy", as plan --json wrote it)`) {
		t.Errorf("a bad saved plan: exit %d, stderr %q; want %d naming its policy", code, errs, exitFailure)
	}
}
