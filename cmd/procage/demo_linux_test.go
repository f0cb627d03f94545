package main

import (
	"os"
	"strings"
	"testing"
)

// TestDemoREADME: the main job runs real cages here, every run does what
// explain says, and the result lines README.md shows are the ones it
// prints (but a shell's own messages, which differ between shells, and
// the checks of programs this host lacks).
func TestDemoREADME(t *testing.T) {
	code, out, errs := runCLI(t, "demo")
	if code != 0 || errs != "" || strings.Contains(out, "MISMATCH") {
		t.Fatalf("demo: exit %d, stderr %q\n%s", code, errs, out)
	}
	for _, want := range []string{"# Linux plan: Landlock ABI", "\nallowed  write a file in DIR:", "\nrefused  change a system file:"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo: no %q in\n%s", want, out)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sample, ok := strings.Cut(string(readme), "On Linux the demo prints")
	_, sample, _ = strings.Cut(sample, "```text\n")
	sample, _, ok2 := strings.Cut(sample, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no demo sample")
	}
	lines := strings.Split(out, "\n")
	n := 0
	for _, line := range strings.Split(sample, "\n") {
		result := strings.HasPrefix(line, "allowed  ") || strings.HasPrefix(line, "refused  ")
		if !result && !strings.HasPrefix(line, "         explain ") {
			continue
		}
		if _, err := os.Stat("/usr/bin/unshare"); err != nil && strings.Contains(line, "unshare") {
			continue
		}
		n++
		found := false
		for _, l := range lines {
			found = found || l == line
		}
		if !found {
			t.Errorf("README.md's demo line is not in the demo's output:\n%s\noutput:\n%s", line, out)
		}
	}
	if n < 8 {
		t.Errorf("README.md's demo sample has %d result and explain lines, want 8 or more", n)
	}
}

// TestREADMECommands: every command README.md indents as one to type (go
// run ./cmd/procage ...) exits 0 here.
func TestREADMECommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(readme), "\n") {
		cmd, ok := strings.CutPrefix(line, "    go run ./cmd/procage ")
		if !ok {
			continue
		}
		n++
		if code, _, errs := runCLI(t, strings.Fields(cmd)...); code != 0 {
			t.Errorf("%s: exit %d, stderr %q", line, code, errs)
		}
	}
	if n < 2 {
		t.Errorf("README.md has %d go run lines, want the main job and the macOS plan", n)
	}
}
