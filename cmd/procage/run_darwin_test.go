//go:build darwin

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procage-go/procage/internal/testenv"
)

// TestRunMakeExample runs README.md's macOS example as written:
// procage run --write "$PWD" --fork -- /usr/bin/make test. make forks a
// shell per recipe, so the forking policy is what lets it work.
func TestRunMakeExample(t *testing.T) {
	testenv.RequireUnsandboxed(t)
	// /usr/bin/make is an xcrun shim: without the developer tools it only
	// offers to install them, and the README's example cannot work.
	if out, err := exec.Command("/usr/bin/xcode-select", "-p").CombinedOutput(); err != nil {
		t.Fatalf("no developer tools: xcode-select -p: %v %s", err, out)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("test:\n\techo made > made.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, out, errs := runCLI(t, "run", "--write", dir, "--fork", "--", "/usr/bin/make", "test")
	if code != 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	made, err := os.ReadFile(filepath.Join(dir, "made.txt"))
	if err != nil || strings.TrimSpace(string(made)) != "made" {
		t.Errorf("the recipe did not run: %q, %v", made, err)
	}
}

// requireCage skips unless this host can cage (not already sandboxed).
func requireCage(t *testing.T) { testenv.RequireUnsandboxed(t) }
