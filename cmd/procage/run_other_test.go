//go:build !darwin && !linux

package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRunUnsupported: off macOS and Linux, run exits 2 with the unsupported error and
// the command never runs.
func TestRunUnsupported(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	code, _, errs := runCLI(t, "run", "--read", "/usr", "--", "/bin/sh", "-c", "echo > "+marker)
	if code != 2 || !strings.Contains(errs, "unsupported on "+runtime.GOOS) {
		t.Errorf("exit %d, stderr %q; want 2 and the unsupported error", code, errs)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the command ran off macOS (stat %s: %v)", marker, err)
	}
	code, out, errs := runCLI(t, "probe")
	if code != 2 || !strings.Contains(out, "apply FAILED") || strings.Count(errs, "\n") != 1 {
		t.Errorf("probe: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, _, errs := runCLI(t, "run", "--read", "/usr"); code != 2 || !strings.Contains(errs, "missing COMMAND") {
		t.Errorf("run without a command: exit %d, %q", code, errs)
	}
}
