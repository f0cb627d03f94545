package main

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
)

// TestDescribe: each error the CLI can meet is one message naming the
// input, without the package prefixes wrapping piles up.
func TestDescribe(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&cage.PolicyError{Kind: cage.ErrTooManyRules, Err: &seatbelt.LimitError{Rules: 2100, Limit: 2000}}, "the profile has 2100 rules, more than the compile limit of 2000"},
		{fmt.Errorf("cage: grant: %w", &pathresolve.PathError{Path: "rel", Err: pathresolve.ErrNotAbsolute}), `"rel": path is not absolute`},
		{&pathresolve.PathError{Path: "/a/locked/x", Component: "/a/locked", Err: fs.ErrPermission}, `"/a/locked/x": at "/a/locked": permission denied`},
		{&cage.PolicyError{Kind: cage.ErrCaseSensitive, Path: "/Volumes/CS/src", Err: &pathresolve.CaseSensitiveError{Path: "/Volumes/CS/src", Volume: "/Volumes/CS"}}, `"/Volumes/CS/src" is on a case-sensitive volume (/Volumes/CS), where Seatbelt's case-insensitive rules would also allow other files`},
		{&profile.Error{Field: "network.ports", Value: "[80]", Err: errors.New("ports apply to loopback mode only")}, `network.ports "[80]": ports apply to loopback mode only`},
		{&profile.Error{Line: 1, Column: 1, Err: errors.New("want an object, not array")}, "want an object, not array"},
		{&cage.UnsupportedError{OSBuild: "linux", What: "spawning a caged process needs macOS Seatbelt"}, "unsupported on linux: spawning a caged process needs macOS Seatbelt"},
		{&cage.UnsupportedError{OSBuild: "linux", What: "tier T1 unavailable", Err: &cage.ApplyError{Step: cage.StepNamespace, Call: "unshare", Errno: syscall.EPERM}},
			"unsupported on linux: tier T1 unavailable: child step namespace (unshare): operation not permitted"},
		{&inputError{where: "--backend linux", err: fmt.Errorf("not here: %w", errors.ErrUnsupported)}, "--backend linux: not here"},
		{errors.New("cage: profile: something broke"), "something broke"},
		{&cage.PolicyError{Kind: cage.ErrSuspectLink, Path: "/p/build/cache", Err: &pathresolve.LinkError{Path: "/p/build/cache", Link: "/p/build/cache", Resolved: "/home/u"}},
			"/p/build/cache resolves through the link /p/build/cache to its own ancestor /home/u, as a link a caged run planted would (if you trust the link: --accept-link /p/build/cache)"},
		{&cage.PolicyError{Kind: cage.ErrSuspectLink, Path: "/p/out/x", Err: &pathresolve.LinkError{Path: "/p/out/x", Link: "/p/out", Resolved: "/home/u/x", Tree: "/p", Writable: true}},
			"/p/out/x resolves through the link /p/out inside the writable tree /p, out of it to /home/u/x, as a link a caged run planted would (if you trust the link: --accept-link /p/out)"},
		{&cage.PolicyError{Kind: cage.ErrSuspectLink, Path: "/my p/x", Err: &pathresolve.LinkError{Path: "/my p/x", Link: "/my p/l\n", Resolved: "/y", Tree: "/my p"}},
			"'/my p/x' resolves through the link $'/my p/l\\x0a' inside the tree '/my p', out of it to /y, as a link a caged run planted would (if you trust the link: --accept-link $'/my p/l\\x0a')"},
		{errors.Join(errors.New("exit status 3"), errors.New("cage: run not ended: pid 12")), "exit status 3; run not ended: pid 12"},
	}
	for _, tt := range tests {
		got := describe(tt.err)
		if tt.want != "" && got != tt.want {
			t.Errorf("describe(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
