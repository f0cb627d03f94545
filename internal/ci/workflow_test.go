package ci

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/procage-go/procage/internal/report"
	"github.com/procage-go/procage/internal/testenv"
)

func readWorkflow(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../.github/workflows/ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// job returns the lines of one job of the workflow (two-space indent).
func job(t *testing.T, wf, name string) []string {
	t.Helper()
	var lines []string
	in := false
	for _, l := range strings.Split(wf, "\n") {
		if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") && strings.HasSuffix(l, ":") {
			in = l == "  "+name+":"
			continue
		}
		if in {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no job %q in the workflow", name)
	}
	return lines
}

// TestActionsPinned: every action is pinned by a full commit SHA, with a
// comment naming its release.
func TestActionsPinned(t *testing.T) {
	pinned := regexp.MustCompile(`^\s*(?:- )?uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$`)
	n := 0
	for _, l := range strings.Split(readWorkflow(t), "\n") {
		if strings.Contains(l, "uses:") {
			n++
			if !pinned.MatchString(l) {
				t.Errorf("not pinned by SHA with a release comment: %s", strings.TrimSpace(l))
			}
		}
	}
	if n < 5 {
		t.Errorf("found %d uses: lines; the parse is broken", n)
	}
}

// TestMacOSLane: the macOS job covers both releases and Intel, is bounded
// in time, runs every step after set-up whatever failed, and names the
// settings the tests read by their current names.
func TestMacOSLane(t *testing.T) {
	wf := readWorkflow(t)
	lines := job(t, wf, "macos")
	text := strings.Join(lines, "\n")
	for _, want := range []string{
		"os: macos-15,", "os: macos-26,", "os: macos-26-intel,", "os: macos-latest,",
		"timeout-minutes:",
		testenv.StrictEnv + ": '1'",
		testenv.CaseSensitiveVolumeEnv + "=",
		report.DirEnv + "=",
		"go run ./internal/ci/skipguard",
		"go run ./internal/ci/reportsum",
		"go run ./internal/ci/benchratio",
		"-json ./...",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the macos job lacks %q", want)
		}
	}
	if !strings.Contains(wf, "\nconcurrency:\n") {
		t.Error("the workflow has no concurrency group")
	}
	// Split into steps: each starts with "      - ".
	var steps [][]string
	for _, l := range lines {
		if strings.HasPrefix(l, "      - ") {
			steps = append(steps, nil)
		}
		if len(steps) > 0 {
			steps[len(steps)-1] = append(steps[len(steps)-1], l)
		}
	}
	if len(steps) < 10 {
		t.Fatalf("found %d steps in the macos job; the parse is broken", len(steps))
	}
	// After checkout and setup-go, every step runs unless the run was
	// cancelled.
	for _, st := range steps[2:] {
		s := strings.Join(st, "\n")
		if !strings.Contains(s, "if: ${{ !cancelled() }}") && !strings.Contains(s, "if: ${{ always() }}") {
			t.Errorf("step runs only when every earlier step passed:\n%s", s)
		}
	}
}

// TestLinuxRunGuardsSkips: .ci/run feeds the Linux tests of tests/ and
// cage/, as root and as nobody, to the skip guard with the Linux
// allow-list, as the macOS lane does with its own.
func TestLinuxRunGuardsSkips(t *testing.T) {
	b, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	guard := "go run ./internal/ci/skipguard -allow internal/ci/skipguard/allow_linux.txt"
	if n := strings.Count(text, guard); n != 3 {
		t.Errorf(".ci/run runs %q %d times, want 3 (as root, and as nobody for tests/ and cage/)", guard, n)
	}
	for _, want := range []string{"go test -count=1 -json ./tests ./cage", "go tool test2json -t -p github.com/procage-go/procage/tests",
		"go tool test2json -t -p github.com/procage-go/procage/cage"} {
		if !strings.Contains(text, want) {
			t.Errorf(".ci/run lacks %q", want)
		}
	}
}
