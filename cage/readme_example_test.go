package cage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// readmeUsage runs the code of README.md's Usage section, verbatim between
// the markers (TestReadmeUsage checks that it still is), and hands back
// the command's output.
func readmeUsage(ctx context.Context, got *[]byte) error {
	// README begin
	p, err := profile.New(profile.BaseV1,
		profile.ReadWrite("/Users/me/project"),
		profile.Fork()) // make forks a shell per recipe
	if err != nil {
		return err
	}
	// Resolves paths, lowers, compiles once. On Linux without the new-names
	// supervisor (tier T2; procage probe) a writable tree cannot keep git
	// hooks out: New refuses the policy there, naming the gap
	// (docs/linux-backend.md).
	c, err := cage.New(p)
	if err != nil {
		return err
	}
	fmt.Print(c.Plan()) // the host backend's plan; cage.WithBackend previews the other OS's
	cmd := c.Command(ctx, "/usr/bin/make", "test")
	cmd.Dir = "/Users/me/project"
	out, err := cmd.Output() // where the host cannot cage: errors.Is(err, errors.ErrUnsupported)
	// README end
	*got = out
	return err
}

// TestReadmeUsage: README.md's Go example is readmeUsage's code, and it
// works as its comments say: the host backend's plan (on macOS a forking
// Seatbelt profile with the project writable; on Linux the Landlock plan
// with the new-names supervisor, or without it New's refusal naming the
// gap),
// and a run that fails, since /Users/me/project does not exist here (the
// darwin tests and cmd/procage's make test cover real runs).
func TestReadmeUsage(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		read <- b
	}()
	stdout := os.Stdout
	os.Stdout = w
	var out []byte
	runErr := readmeUsage(context.Background(), &out)
	os.Stdout = stdout
	w.Close()
	printed := <-read
	skipIfTooOld(t, runErr) // New refused this kernel's Landlock ABI by name
	rules := []string{"(allow process-fork)", `(subpath "/Users/me/project")`}
	if runtime.GOOS == "linux" {
		if nn := cage.Probe().NewNames; nn != nil || cage.Probe().Tier != "T1" {
			// No supervisor here: New refuses, naming the gap.
			if ge, ok := errors.AsType[*profile.GapError](runErr); !ok || !strings.Contains(ge.Error(), string(profile.GapTrustHandoff)) {
				t.Fatalf("without the new-names supervisor (%v): %v, want the trust-handoff refusal", nn, runErr)
			}
			return
		}
		rules = []string{"/Users/me/project", "\nnew names: "} // the Landlock plan, the supervisor in it
	}
	for _, s := range rules {
		if !bytes.Contains(printed, []byte(s)) {
			t.Errorf("the printed plan lacks %s:\n%s", s, printed)
		}
	}
	if len(out) != 0 {
		t.Errorf("Output = %q, want nothing", out)
	}
	if runErr == nil {
		t.Errorf("make ran in /Users/me/project, which the test does not create")
	}
	// Last: a binary run away from the source tree skips here.
	readme := testenv.SourceFile(t, "../README.md")
	src := testenv.SourceFile(t, "readme_example_test.go")
	_, block, ok := strings.Cut(string(readme), "## Usage\n\n```go\n")
	block, _, ok2 := strings.Cut(block, "```")
	_, code, ok3 := strings.Cut(string(src), "\t// README begin\n")
	code, _, ok4 := strings.Cut(code, "\t// README end\n")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatal("README.md's Usage block or this file's markers are missing")
	}
	var want strings.Builder
	for _, line := range strings.SplitAfter(block, "\n") {
		if line != "" && line != "\n" {
			want.WriteString("\t")
		}
		want.WriteString(line)
	}
	if want.String() != code {
		t.Errorf("README.md's Usage code differs from readmeUsage:\nREADME:\n%s\nreadmeUsage:\n%s", want.String(), code)
	}
}
