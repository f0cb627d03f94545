package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procage-go/procage/internal/testenv"
)

// TestRunPreset: --preset python runs python3 with its cache variables
// naming the cage's cache directory beside the run's private TMPDIR, both
// removed when procage ends; plan lists what the preset granted; an
// unknown name is bad input naming the presets.
func TestRunPreset(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Skip(t, testenv.ReasonNoProgram, "python3 is not on PATH")
	}
	code, out, errs := runCLI(t, "run", "--preset", "python", "--", py, "-c",
		"import os; print(os.environ['TMPDIR']); print(os.environ['PIP_CACHE_DIR'])")
	lines := strings.Fields(out)
	tmp := ""
	if len(lines) == 2 {
		tmp = filepath.Dir(lines[0])
	}
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], filepath.Join(tmp, "procage-cache-")) || filepath.Base(lines[1]) != "pip" {
		t.Fatalf("run --preset python: exit %d, stdout %q, stderr %q; want PIP_CACHE_DIR=%s/procage-cache-*/pip", code, out, errs, tmp)
	}
	for _, d := range []string{lines[0], filepath.Dir(lines[1])} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s is still there after procage run (err %v)", d, err)
		}
	}

	// With --env the environment is explicit: the caller's GOCACHE still
	// gives way to the private one.
	t.Setenv("GOCACHE", "/caller/cache")
	code, out, errs = runCLI(t, "run", "--preset", "go", "--env", "A=1", "--", "/bin/sh", "-c", `echo "$GOCACHE"`)
	if got := strings.TrimSpace(out); code != 0 || !strings.HasPrefix(got, filepath.Join(tmp, "procage-cache-")) || !strings.HasSuffix(got, "/go-build") {
		t.Errorf("run --preset go --env: exit %d, GOCACHE %q, stderr %q; want the run's private one", code, got, errs)
	}

	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCLI(t, "plan", "--backend", "linux", "--home", home, "--preset", "git")
	gitconfig := filepath.Join(home, ".gitconfig")
	if code != 0 || !strings.Contains(out, "path policy   "+gitconfig+": read_file") || !strings.Contains(errs, "preset git: read "+gitconfig) {
		t.Errorf("plan --preset git: exit %d, stderr %q; want %s in the plan and the note:\n%s", code, errs, gitconfig, out)
	}

	code, _, errs = runCLI(t, "run", "--preset", "cobol", "--", "/bin/true")
	if code != exitFailure || !strings.Contains(errs, "go, rust, node, python, c, git") {
		t.Errorf("--preset cobol: exit %d, stderr %q; want %d naming the presets", code, errs, exitFailure)
	}
}
