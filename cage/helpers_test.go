package cage_test

import (
	"sync"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/libsandbox"
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
