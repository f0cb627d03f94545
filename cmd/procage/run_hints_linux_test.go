package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunLinuxExecDenied (issue 24): an exec the cage refuses (126) names
// the program as found, through PATH or from the working directory, and
// the --exec that allows it: its directory, or its #! interpreter's; with
// --policy, the rule to add to the file. The fix named then runs it.
func TestRunLinuxExecDenied(t *testing.T) {
	dir := realTempDir(t)
	bin, interp := filepath.Join(dir, "bin"), filepath.Join(dir, "interp")
	for _, d := range []string{bin, interp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sh, err := os.ReadFile("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		bin + "/tool":    "#!/bin/sh\necho tool ran\n",
		bin + "/script":  "#!" + interp + "/mysh\necho script ran\n",
		interp + "/mysh": string(sh),
	}
	for name, body := range files {
		if err := os.WriteFile(name, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	policy := filepath.Join(dir, "p.json")
	if err := os.WriteFile(policy, []byte(`{"version": 1, "base": "v1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	t.Chdir(dir)
	tests := []struct {
		args []string
		want string
		fix  []string
		out  string
	}{
		{[]string{"tool"}, "procage run: tool (" + bin + "/tool in PATH): the cage does not allow executing it; to allow it: --exec " + bin + "\n",
			[]string{"--exec", bin}, "tool ran\n"},
		{[]string{"./bin/tool"}, "procage run: ./bin/tool (" + bin + "/tool): the cage does not allow executing it; to allow it: --exec " + bin + "\n",
			[]string{"--exec", "bin"}, "tool ran\n"},
		{[]string{"--exec", bin, "--", "script"}, "procage run: script (" + bin + "/script in PATH): the cage does not allow executing its #! interpreter " +
			interp + "/mysh; to allow it: --exec " + interp + "\n",
			[]string{"--exec", interp}, "script ran\n"},
		{[]string{"--policy", policy, "--", bin + "/tool"}, "procage run: " + bin + "/tool: the cage does not allow executing it; to allow it: " +
			`add {"access": ["read", "exec"], "subpath": "` + bin + `"} to the "fs" rules of ` + policy + "\n", nil, ""},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, append([]string{"run"}, tt.args...)...)
		if code != exitCannotExecute || out != "" || errs != tt.want {
			t.Errorf("run %q: exit %d, stdout %q, stderr %q; want 126, nothing, %q", tt.args, code, out, errs, tt.want)
		}
		if tt.fix == nil {
			continue
		}
		args := append(append([]string{"run"}, tt.fix...), tt.args...)
		if code, out, errs := runCLI(t, args...); code != 0 || out != tt.out {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0, %q", args, code, out, errs, tt.out)
		}
	}
}

// TestRunLinuxExitStatus: run exits with the command's own status, and
// 128+N when the command died of signal N, as a shell reports it (with
// --fork: a failing shell under a policy without it gets a --fork hint on
// stderr, TestRunLinuxForkHint).
func TestRunLinuxExitStatus(t *testing.T) {
	for _, tt := range []struct {
		script string
		code   int
	}{
		{"exit 0", 0}, {"exit 2", 2}, {"exit 125", 125}, {"kill -USR1 $$", 128 + 10}, {"kill -KILL $$", 128 + 9},
	} {
		if code, _, errs := runCLI(t, "run", "--fork", "--", "/bin/sh", "-c", tt.script); code != tt.code || errs != "" {
			t.Errorf("run sh -c %q: exit %d, stderr %q; want %d, nothing", tt.script, code, errs, tt.code)
		}
	}
}

// TestRunLinuxEnv: --env sets a variable (the last one of a name wins,
// and it passes even a name the default filter drops as secret);
// --env-allow passes only the names it lists.
func TestRunLinuxEnv(t *testing.T) {
	t.Setenv("GITHUB_TOKEN", "from-caller")
	t.Setenv("PROCAGE_TEST_KEPT", "kept")
	env := func(args ...string) []string {
		t.Helper()
		code, out, errs := runCLI(t, append(append([]string{"run"}, args...), "--", "/usr/bin/env")...)
		if code != 0 {
			t.Fatalf("run %q env: exit %d, stderr %q", args, code, errs)
		}
		return strings.Split(strings.TrimSpace(out), "\n")
	}
	got := env("--env", "A=1", "--env", "A=2=two", "--env", "GITHUB_TOKEN=given")
	for _, want := range []string{"A=2=two", "GITHUB_TOKEN=given", "PROCAGE_TEST_KEPT=kept"} {
		if !slices.Contains(got, want) {
			t.Errorf("--env: the command's environment %q lacks %s", got, want)
		}
	}
	if slices.Contains(got, "A=1") || slices.Contains(got, "GITHUB_TOKEN=from-caller") {
		t.Errorf("--env: the command's environment %q keeps a replaced variable", got)
	}
	if got, want := env("--env-allow", "PROCAGE_TEST_KEPT", "--env", "B=b"), []string{"PROCAGE_TEST_KEPT=kept", "B=b"}; !slices.Equal(got, want) {
		t.Errorf("--env-allow PROCAGE_TEST_KEPT --env B=b: the command's environment is %q, want %q", got, want)
	}
	for _, v := range env("--private-tmp", "--env", "B=b") {
		if dir, ok := strings.CutPrefix(v, "TMPDIR="); ok && !strings.Contains(dir, "procage-run-") {
			t.Errorf("--private-tmp --env B=b: TMPDIR=%s, want the run's own", dir)
		}
	}
}

// TestRunLinuxPathFlags: a relative path and ~/ in run's path flags are
// the files the command then reads; --home moves the protected home.
func TestRunLinuxPathFlags(t *testing.T) {
	dir := realTempDir(t)
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	t.Setenv("HOME", dir)
	for _, args := range [][]string{{"--read", "sub"}, {"--read=~/sub"}, {"--grant", "sub/f"}} {
		code, out, errs := runCLI(t, append(append([]string{"run"}, args...), "--", "/bin/cat", dir+"/sub/f")...)
		if code != 0 || out != "content\n" {
			t.Errorf("run %q cat: exit %d, stdout %q, stderr %q; want 0 and the file", args, code, out, errs)
		}
	}
	// Reading a tree holding the protected home's secrets is a gap at T2
	// (at T1 an empty mount hides each store: no gap).
	code, _, errs := runCLI(t, "run", "--tier", "t2", "--home", "h", "--read", dir, "--", "/bin/true")
	if code != exitFailure || !strings.Contains(errs, "secrets protects "+dir+"/h/.aws") || !strings.Contains(errs, "--accept-gap secrets-inside-allowed-tree") {
		t.Errorf("--home h --read %s: exit %d, stderr %q; want 125 naming %s/h/.aws", dir, code, errs, dir)
	}
}
