package main

import (
	"fmt"
	"os"
	"os/user"
	"path"
	"runtime"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/pathresolve/macfs"
)

// backend is the sandbox a plan is made for, and the file system its paths
// are resolved against.
type backend struct {
	name string
	// simulated is set when paths resolve against macfs's
	// macOS file system rather than the host's.
	simulated bool
	opts      []cage.Option
	resolver  *pathresolve.Resolver
}

// defaultBackend is the host's sandbox: linux on Linux, macos elsewhere
// (other OSes have none, and package cage plans for macOS there).
func defaultBackend() string {
	if runtime.GOOS == "linux" {
		return "linux"
	}
	return "macos"
}

// registerBackend adds --backend to a command that makes a plan.
func registerBackend(fs *flagSet) *string {
	return fs.String("backend", defaultBackend(), "make the plan for `OS`: macos (off macOS: paths resolved against a simulated Mac, home /Users/$USER) or linux")
}

// newBackend prepares the named backend.
func newBackend(name string) (*backend, error) {
	switch name {
	case "macos":
		if runtime.GOOS == "darwin" {
			r, err := pathresolve.NewHost()
			if err != nil {
				return nil, err
			}
			return &backend{name: name, opts: []cage.Option{cage.WithBackend(cage.BackendMacOS)}, resolver: r}, nil
		}
		return simulatedMac()
	case "linux":
		// The Linux plan resolves against the host's file system; off
		// Linux that is a preview with this host's paths.
		r, err := pathresolve.NewHost()
		if err != nil {
			return nil, err
		}
		return &backend{name: name, opts: []cage.Option{cage.WithBackend(cage.BackendLinux)}, resolver: r}, nil
	}
	return nil, badValuef("--backend %q: want macos or linux", name)
}

// simulatedMac resolves paths against the macOS file system of
// macfs: /tmp, /var and /etc link into /private, the data volume
// is joined by firmlinks, and the home directory is /Users/<name> for the
// current user's name.
func simulatedMac() (*backend, error) {
	fsys := macfs.NewMacOS()
	home := path.Join("/Users", macUserName())
	if err := fsys.MkdirAll(home); err != nil {
		return nil, fmt.Errorf("simulated home %s: %w", home, err)
	}
	fl := fsys.Firmlinks()
	return &backend{
		name:      "macos",
		simulated: true,
		opts:      []cage.Option{cage.WithBackend(cage.BackendMacOS), cage.WithFS(fsys, fl), cage.WithHome(home)},
		resolver:  pathresolve.New(fsys, pathresolve.WithFirmlinks(fl)),
	}, nil
}

// macUserName is the name of the simulated Mac's user: the current user's,
// or "me" when it has none that fits a path component.
func macUserName() string {
	name := os.Getenv("USER")
	if name == "" {
		if u, err := user.Current(); err == nil {
			name = u.Username
		}
	}
	if name == "" || name == "." || name == ".." || path.Base(name) != name {
		return "me"
	}
	return name
}
