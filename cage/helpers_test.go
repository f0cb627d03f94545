package cage_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/pathresolve/macfs"
	"github.com/procage-go/procage/profile"
)

// countingCompiler stands in for libsandbox: it records every compile and
// returns fixed bytecode or err.
type countingCompiler struct {
	mu     sync.Mutex
	texts  []string
	params [][]libsandbox.Param
	err    error
}

func (c *countingCompiler) Compile(text string, params []libsandbox.Param) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts = append(c.texts, text)
	c.params = append(c.params, params)
	if c.err != nil {
		return nil, c.err
	}
	return []byte("bytecode"), nil
}

func (c *countingCompiler) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.texts)
}

// simFS returns a simulated macOS tree with a case-sensitive volume at
// /Volumes/CS holding a file and a socket path's directory.
func simFS(tb testing.TB) *macfs.FS {
	tb.Helper()
	fsys := macfs.NewMacOS()
	if err := fsys.MountCaseSensitive("/Volumes/CS"); err != nil {
		tb.Fatal(err)
	}
	if err := fsys.WriteFile("/Volumes/CS/proj/main.go", []byte("package main")); err != nil {
		tb.Fatal(err)
	}
	if err := fsys.MkdirAll("/Users/me/project"); err != nil {
		tb.Fatal(err)
	}
	return fsys
}

// simOpts are the options that make a cage deterministic on any OS.
func simOpts(tb testing.TB, extra ...cage.Option) []cage.Option {
	tb.Helper()
	fsys := simFS(tb)
	return append([]cage.Option{
		cage.WithBackend(cage.BackendMacOS),
		cage.WithFS(fsys, fsys.Firmlinks()),
		cage.WithHome(macfs.Home),
		cage.WithSandboxCheck(func() (bool, error) { return false, nil }),
	}, extra...)
}

func mustPolicy(tb testing.TB, opts ...profile.Option) profile.Policy {
	tb.Helper()
	p, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// docHolds fails unless doc.go holds, as comment lines, the code of file
// between its "// doc begin" and "// doc end" markers, each line passed
// through rewrite (nil: as it is). A binary run away from the source tree
// skips (testenv.SourceFile).
func docHolds(t *testing.T, file string, rewrite func(string) string) {
	t.Helper()
	doc := testenv.SourceFile(t, "doc.go")
	src := testenv.SourceFile(t, file)
	_, code, ok := strings.Cut(string(src), "\t// doc begin\n")
	code, _, ok2 := strings.Cut(code, "\t// doc end\n")
	if !ok || !ok2 {
		t.Fatalf("%s: the markers are missing", file)
	}
	var want strings.Builder
	for _, line := range strings.SplitAfter(code, "\n") {
		if line == "" {
			continue
		}
		if rewrite != nil {
			line = rewrite(line)
		}
		want.WriteString("//" + line)
	}
	if !strings.Contains(string(doc), want.String()) {
		t.Errorf("doc.go does not hold %s's code:\n%s", file, want.String())
	}
}
