package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocTranscripts runs every "$ procage ..." line of the docs' console
// blocks and compares the output with the lines that follow it. The
// transcripts describe the simulated Mac (--backend macos off macOS) with
// USER=me, and the Linux plan (--backend linux, --home for the home
// directory); on a Mac the host's own file system would answer.
func TestDocTranscripts(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("the transcripts use the simulated macOS file system")
	}
	t.Setenv("USER", "me")
	t.Chdir(filepath.Join("..", ".."))
	n := 0
	for _, doc := range []string{"docs/policy.md", "docs/linux-backend.md", "README.md"} {
		for _, tr := range transcripts(t, doc) {
			n++
			code, out, errs := runCLI(t, tr.args...)
			got := strings.TrimRight(out+errs, "\n")
			if diff := cmp.Diff(normalize(tr.want, got), ruleNumber.ReplaceAllString(got, "rule N")); diff != "" {
				t.Errorf("%s: procage %s (exit %d) (-want +got):\n%s", doc, strings.Join(tr.args, " "), code, diff)
			}
		}
	}
	if n < 8 {
		t.Errorf("found %d transcripts, want the docs' 8 or more", n)
	}
}

// ruleNumber is a rule's index in a profile, which moves whenever a base
// or hard-deny rule is added; the transcripts' numbers are not compared.
var ruleNumber = regexp.MustCompile(`rule [0-9]+`)

// normalize returns want with rule numbers replaced and each line ending
// in " ..." (an elided long line) completed from the same line of got.
func normalize(want, got string) string {
	w := strings.Split(ruleNumber.ReplaceAllString(want, "rule N"), "\n")
	g := strings.Split(ruleNumber.ReplaceAllString(got, "rule N"), "\n")
	for i, line := range w {
		if prefix, ok := strings.CutSuffix(line, " ..."); ok && i < len(g) && strings.HasPrefix(g[i], prefix) {
			w[i] = g[i]
		}
	}
	return strings.Join(w, "\n")
}

type transcript struct {
	args []string
	want string
}

// transcripts returns the commands of doc's ```console blocks that start
// with "$ procage " (or "$ go run ./cmd/procage ") and the output lines
// after each.
func transcripts(t *testing.T, doc string) []transcript {
	t.Helper()
	f, err := os.Open(doc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []transcript
	in := false
	var cur *transcript
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "```console":
			in = true
			continue
		case strings.HasPrefix(line, "```"):
			in, cur = false, nil
			continue
		case !in:
			continue
		}
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			cur = nil
			for _, prefix := range []string{"procage ", "go run ./cmd/procage "} {
				if rest, ok := strings.CutPrefix(cmd, prefix); ok {
					out = append(out, transcript{args: strings.Fields(rest)})
					cur = &out[len(out)-1]
				}
			}
			continue
		}
		if cur != nil {
			if cur.want != "" {
				cur.want += "\n"
			}
			cur.want += line
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPolicyExamples: every example policy under docs/examples loads, with
// no warning; each under docs/examples/invalid is refused with exit 125 and
// one line naming the file, line and column.
func TestPolicyExamples(t *testing.T) {
	good, _ := filepath.Glob("../../docs/examples/*.json")
	bad, _ := filepath.Glob("../../docs/examples/invalid/*.json")
	if len(good) < 3 || len(bad) < 4 {
		t.Fatalf("found %d examples and %d invalid ones, want 3 and 4", len(good), len(bad))
	}
	for _, f := range good {
		code, out, errs := runCLI(t, "plan", "--backend", "macos", "--policy", f)
		if code != 0 || !strings.Contains(out, "(version 1)") || errs != "" {
			t.Errorf("%s: exit %d, stderr %q", f, code, errs)
		}
	}
	for _, f := range bad {
		code, out, errs := runCLI(t, "plan", "--backend", "macos", "--policy", f)
		if code != exitFailure || out != "" || !strings.HasPrefix(errs, "procage plan: "+f+":") || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 125 and one line naming the file", f, code, out, errs)
		}
	}
}

// TestPolicyRoundTrip: the policy 'plan --json' prints, given back with
// --policy, makes the same plan; so does a policy built from flags, its
// accepted gaps and home directory included (issue 24), for either
// backend.
func TestPolicyRoundTrip(t *testing.T) {
	examples, _ := filepath.Glob("../../docs/examples/*.json")
	flags := [][]string{
		{"--write", "/tmp/w", "--exec", "/opt/tools", "--read", "/usr/share/dict/words", "--network", "loopback", "--port", "8080",
			"--unix-socket", "/var/run/x.sock", "--mach", "com.apple.trustd.agent", "--fork", "--waive", "secrets",
			"--seatbelt", `(allow sysctl-read (sysctl-name "kern.ostype"))`},
		{"--exec-target-only", "--network", "on"},
		{"--write", "/tmp/w", "--network", "loopback", "--port", "8080", "--accept-gap", "network-loopback", "--home", "/Users/bob"},
		{"--backend", "linux", "--write", "/tmp/w", "--network", "loopback", "--port", "8080", "--accept-gap", "network-loopback", "--home", "/home/bob"},
		{"--backend", "linux", "--read", "/tmp/r", "--mach", "com.apple.x"}, // a refused gap
	}
	for _, f := range examples {
		flags = append(flags, []string{"--policy", f}, []string{"--backend", "linux", "--policy", f})
	}
	dir := t.TempDir()
	for i, args := range flags {
		backend := "macos"
		if len(args) > 1 && args[0] == "--backend" {
			backend, args = args[1], args[2:]
		}
		code, first, errs := runCLI(t, append([]string{"plan", "--backend", backend, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errs)
		}
		var plan struct {
			Policy  json.RawMessage
			Profile string
		}
		if err := json.Unmarshal([]byte(first), &plan); err != nil {
			t.Fatal(err)
		}
		saved := filepath.Join(dir, "policy.json")
		if err := os.WriteFile(saved, plan.Policy, 0o644); err != nil {
			t.Fatal(err)
		}
		code, second, errs := runCLI(t, "plan", "--backend", backend, "--json", "--policy", saved)
		if code != 0 {
			t.Fatalf("%d %v: the saved policy does not load: exit %d: %s\n%s", i, args, code, errs, plan.Policy)
		}
		if diff := cmp.Diff(first, second); diff != "" {
			t.Errorf("%v: plan --json -> --policy changed the plan (-flags +file):\n%s", args, diff)
		}
	}
}

// TestCommandDocExamples runs the examples of this command's package
// documentation where this host can (run and probe need a cage: macOS or
// Linux); each must exit 0. One marked "macOS only" is run elsewhere only
// to check it fails with exit 125 and runs nothing.
func TestCommandDocExamples(t *testing.T) {
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(src), "\n") {
		cmd, ok := strings.CutPrefix(line, "//\tprocage ")
		if !ok {
			continue
		}
		cmd, comment, _ := strings.Cut(cmd, "#")
		macOnly := strings.Contains(comment, "macOS only")
		if macOnly && runtime.GOOS == "darwin" {
			continue // the darwin tests run real cages
		}
		if runtime.GOOS != "darwin" && runtime.GOOS != "linux" && (strings.HasPrefix(cmd, "run ") || strings.HasPrefix(cmd, "probe") || strings.HasPrefix(cmd, "demo")) {
			continue // no cage on this OS
		}
		n++
		args := strings.Fields(cmd)
		code, _, errs := runCLI(t, args...)
		want := 0
		if macOnly {
			want = exitFailure
		}
		if code != want {
			t.Errorf("procage %s: exit %d, want %d; stderr %q", cmd, code, want, errs)
		}
	}
	if n < 4 {
		t.Errorf("found %d examples in the package documentation, want 4 or more", n)
	}
}
