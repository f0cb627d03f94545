//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
)

// TestRunMakeExampleLinux runs README.md's Linux examples as written:
// procage run --write "$PWD" --fork -- /usr/bin/make test runs where T1
// supervises new names and is refused naming the gap elsewhere; with
// --tier t2 it is refused unless the class is waived (--waive
// trust-handoff), and then runs. make forks a shell per recipe (the
// forking policy).
func TestRunMakeExampleLinux(t *testing.T) {
	if _, err := exec.LookPath("/usr/bin/make"); err != nil {
		t.Skip("no /usr/bin/make on this host")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("test:\n\techo made > made.txt\n"+
		"hook:\n\t-mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit\n\t-echo evil > .git/commondir\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A repository without hooks/ (as a clone with hooks removed has it).
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".git/hooks")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	made := func(how string, code int, out, errs string) {
		t.Helper()
		if code != 0 {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", how, code, out, errs)
		}
		b, err := os.ReadFile(filepath.Join(dir, "made.txt"))
		if err != nil || strings.TrimSpace(string(b)) != "made" {
			t.Errorf("%s: the recipe did not run: %q, %v", how, b, err)
		}
		os.Remove(filepath.Join(dir, "made.txt"))
	}
	refused := func(how string, code int, out, errs string) {
		t.Helper()
		if code != exitFailure || out != "" || !strings.Contains(errs, "trust-handoff") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 125 and one line naming the gap", how, code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "made.txt")); !os.IsNotExist(err) {
			t.Errorf("%s: make ran under a refused policy (stat: %v)", how, err)
		}
	}
	code, out, errs := runCLI(t, "run", "--write", dir, "--fork", "--", "/usr/bin/make", "test")
	if r := cage.Probe(); r.Tier == "T1" && r.NewNames == nil {
		made("the default tier with the new-names supervisor", code, out, errs)
		// The recipe cannot plant a hook or a commondir (make ignores the
		// errors: the "-" prefix).
		code, out, errs = runCLI(t, "run", "--write", dir, "--fork", "--", "/usr/bin/make", "hook")
		if code != 0 || !strings.Contains(errs, "Operation not permitted") {
			t.Errorf("make hook: exit %d, stdout %q, stderr %q; want the creations refused", code, out, errs)
		}
		for _, p := range []string{".git/hooks", ".git/commondir"} {
			if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
				t.Errorf("make hook: %s exists", p)
			}
		}
	} else {
		refused("without the new-names supervisor ("+r.String()+")", code, out, errs)
	}
	code, out, errs = runCLI(t, "run", "--tier", "t2", "--write", dir, "--fork", "--", "/usr/bin/make", "test")
	refused("T2 without --waive trust-handoff", code, out, errs)
	code, out, errs = runCLI(t, "run", "--tier", "t2", "--write", dir, "--fork", "--waive", "trust-handoff", "--", "/usr/bin/make", "test")
	made("T2 with --waive trust-handoff", code, out, errs)
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
		NewNames  *string `json:"new_names_unsupervised"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 || !got.OK || got.Apply != nil || got.RunSearch != nil || !strings.Contains(out, `"run_search": null`) || got.OSBuild == "" || got.Sandbox != "Landlock+seccomp" || errs != "" {
		t.Errorf("probe --json: exit %d, %q (%v), stderr %q", code, out, err, errs)
	}
	if nn := cage.Probe().NewNames; (nn == nil) != (got.NewNames == nil) {
		t.Errorf("probe --json: new_names_unsupervised %v, Probe().NewNames %v", got.NewNames, nn)
	}
}
