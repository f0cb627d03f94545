//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunMakeExampleLinux runs README.md's Linux example as written:
// procage run --write "$PWD" --fork --waive trust-handoff -- /usr/bin/make
// test. make forks a shell per recipe (the forking policy), and a writable
// tree cannot keep git hooks out under Landlock (the waiver).
func TestRunMakeExampleLinux(t *testing.T) {
	if _, err := exec.LookPath("/usr/bin/make"); err != nil {
		t.Skip("no /usr/bin/make on this host")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("test:\n\techo made > made.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, out, errs := runCLI(t, "run", "--write", dir, "--fork", "--waive", "trust-handoff", "--", "/usr/bin/make", "test")
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	made, err := os.ReadFile(filepath.Join(dir, "made.txt"))
	if err != nil || strings.TrimSpace(string(made)) != "made" {
		t.Errorf("the recipe did not run: %q, %v", made, err)
	}
	// Without the waiver the policy is refused by name and make never runs.
	os.Remove(filepath.Join(dir, "made.txt"))
	code, out, errs = runCLI(t, "run", "--write", dir, "--fork", "--", "/usr/bin/make", "test")
	if code != exitFailure || out != "" || !strings.Contains(errs, "trust-handoff") || strings.Count(errs, "\n") != 1 {
		t.Errorf("without --waive trust-handoff: exit %d, stdout %q, stderr %q; want 125 and one line naming the gap", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
		t.Errorf("make ran under a refused policy (stat: %v)", err)
	}
}

// TestProbeJSONLinux: this host cages, and probe --json says so.
func TestProbeJSONLinux(t *testing.T) {
	code, out, errs := runCLI(t, "probe", "--json")
	var got struct {
		OSBuild   string `json:"os_build"`
		Sandbox   string
		OK        bool
		Apply     *string
		RunSearch *string `json:"run_search"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 || !got.OK || got.Apply != nil || got.RunSearch != nil || !strings.Contains(out, `"run_search": null`) || got.OSBuild == "" || got.Sandbox != "Landlock+seccomp" || errs != "" {
		t.Errorf("probe --json: exit %d, %q (%v), stderr %q", code, out, err, errs)
	}
}
