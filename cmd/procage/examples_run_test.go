//go:build linux || darwin

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// linuxVerdicts reads docs/policy.md's table of what Linux does with each
// example: the file's name and, for a refused one, the gaps named.
func linuxVerdicts(t *testing.T) map[string][]string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\| \[examples/([^]]+)\]\([^)]*\) \| (runs|refused)(.*)\|$`)
	gap := regexp.MustCompile("`([a-z-]+)`")
	out := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		gaps := []string{}
		if m[2] == "refused" {
			for _, g := range gap.FindAllStringSubmatch(m[3], -1) {
				gaps = append(gaps, g[1])
			}
		}
		out[m[1]] = gaps
	}
	return out
}

// TestPolicyExamplesRun (issue 24): every example policy runs a command
// in the host's real cage, or on Linux is refused naming exactly the gaps
// docs/policy.md lists for it, and runs once those are accepted.
func TestPolicyExamplesRun(t *testing.T) {
	requireCage(t)
	verdicts := linuxVerdicts(t)
	files, _ := filepath.Glob("../../docs/examples/*.json")
	if len(files) < 3 || len(verdicts) != len(files) {
		t.Fatalf("%d examples, %d rows in docs/policy.md's Linux table: want one row per example", len(files), len(verdicts))
	}
	accept := regexp.MustCompile(`--accept-gap ([a-z-]+)`)
	for _, f := range files {
		refused, ok := verdicts[filepath.Base(f)]
		if !ok {
			t.Errorf("docs/policy.md does not say what Linux does with %s", f)
			continue
		}
		if runtime.GOOS != "linux" {
			refused = nil // macOS has no gaps
		}
		cmd := []string{"run", "--policy", f, "--", "/bin/sh", "-c", "echo ran"}
		code, out, errs := runCLI(t, cmd...)
		if len(refused) == 0 {
			if code != 0 || out != "ran\n" {
				t.Errorf("%s: exit %d, stdout %q, stderr %q; want it to run", f, code, out, errs)
			}
			continue
		}
		var named []string
		for _, m := range accept.FindAllStringSubmatch(errs, -1) {
			named = append(named, m[1])
		}
		slices.Sort(named)
		want := slices.Sorted(slices.Values(refused))
		if code != exitFailure || out != "" || !slices.Equal(named, want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 125 and one line naming exactly --accept-gap %v", f, code, out, errs, want)
			continue
		}
		for _, g := range refused {
			cmd = append([]string{"run", "--accept-gap", g}, cmd[1:]...)
		}
		if code, out, errs := runCLI(t, cmd...); code != 0 || out != "ran\n" {
			t.Errorf("%s with the gaps accepted: exit %d, stdout %q, stderr %q; want it to run", f, code, out, errs)
		}
	}
}
