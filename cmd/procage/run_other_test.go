//go:build !darwin && !linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRunUnsupported: off macOS and Linux, run exits 125 with the unsupported error and
// the command never runs.
func TestRunUnsupported(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	code, _, errs := runCLI(t, "run", "--read", "/usr", "--", "/bin/sh", "-c", "echo > "+marker)
	if code != exitFailure || !strings.Contains(errs, "unsupported on "+runtime.GOOS) {
		t.Errorf("exit %d, stderr %q; want 125 and the unsupported error", code, errs)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the command ran off macOS (stat %s: %v)", marker, err)
	}
	code, out, errs := runCLI(t, "probe")
	if code != exitCannotCage || !strings.Contains(out, "apply FAILED") || strings.Count(errs, "\n") != 1 {
		t.Errorf("probe: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runCLI(t, "probe", "--json")
	var got struct {
		OSBuild   string `json:"os_build"`
		OK        bool
		Apply     *string
		RunSearch *string `json:"run_search"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != exitCannotCage || got.OK || got.OSBuild != runtime.GOOS ||
		got.Apply == nil || !strings.Contains(*got.Apply, "unsupported on "+runtime.GOOS) || got.RunSearch == nil {
		t.Errorf("probe --json: exit %d, %q (%v), stderr %q", code, out, err, errs)
	}
	if code, _, errs := runCLI(t, "run", "--read", "/usr"); code != exitFailure || !strings.Contains(errs, "missing COMMAND") {
		t.Errorf("run without a command: exit %d, %q", code, errs)
	}
}
