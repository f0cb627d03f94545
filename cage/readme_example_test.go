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
	"github.com/procage-go/procage/profile"
)

// readmeUsage runs the code of README.md's Usage section, verbatim between
// the markers (TestReadmeUsage checks that it still is), and hands back
// the command's output.
func readmeUsage(ctx context.Context, got *[]byte) error {
	// README begin
	p, err := profile.New(profile.BaseV1,
		profile.ReadWrite("/Users/me/project"),
		profile.Fork(),                                 // make forks a shell per recipe
		profile.Network(profile.NetworkLoopback, 8080)) // localhost:8080 only
	if err != nil {
		return err
	}
	c, err := cage.New(p) // resolves paths, lowers, compiles once
	if err != nil {
		return err
	}
	fmt.Print(c.Plan()) // the Seatbelt profile, on any OS
	cmd := c.Command(ctx, "/usr/bin/make", "test")
	cmd.Dir = "/Users/me/project"
	out, err := cmd.Output() // macOS; elsewhere errors.Is(err, errors.ErrUnsupported)
	// README end
	*got = out
	return err
}

// TestReadmeUsage: README.md's Go example is readmeUsage's code, and it
// works as its comments say: a forking plan with the project writable and
// networking on localhost:8080; off macOS the command fails as unsupported and
// never runs. (On a Mac /Users/me/project usually does not exist, so the
// run fails there too: the darwin tests cover real runs.)
func TestReadmeUsage(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("readme_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
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
	for _, rule := range []string{"(allow process-fork)", `(subpath "/Users/me/project")`, `(remote ip "localhost:8080")`} {
		if !bytes.Contains(printed, []byte(rule)) {
			t.Errorf("the printed plan lacks %s", rule)
		}
	}
	if runtime.GOOS != "darwin" && (!errors.Is(runErr, errors.ErrUnsupported) || len(out) != 0) {
		t.Errorf("Output off macOS = %q, %v; want nothing and ErrUnsupported", out, runErr)
	}
	if runErr == nil {
		t.Errorf("make ran in /Users/me/project, which the test does not create")
	}
}
