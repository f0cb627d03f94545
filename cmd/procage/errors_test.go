package main

import (
	"errors"
	"fmt"
	"io/fs"
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
		bad  bool // exit 2
	}{
		{&cage.PolicyError{Kind: cage.ErrTooManyRules, Err: &seatbelt.LimitError{Rules: 2100, Limit: 2000}}, "the profile has 2100 rules, more than the limit of 2000", true},
		{fmt.Errorf("cage: grant: %w", &pathresolve.PathError{Path: "rel", Err: pathresolve.ErrNotAbsolute}), `"rel": path is not absolute`, true},
		{&pathresolve.PathError{Path: "/a/locked/x", Component: "/a/locked", Err: fs.ErrPermission}, `"/a/locked/x": at "/a/locked": permission denied`, true},
		{&cage.PolicyError{Kind: cage.ErrCaseSensitive, Path: "/Volumes/CS/src", Err: &pathresolve.CaseSensitiveError{Path: "/Volumes/CS/src", Volume: "/Volumes/CS"}}, `"/Volumes/CS/src" is on a case-sensitive volume (/Volumes/CS), where Seatbelt's case-insensitive rules would also allow other files`, true},
		{&profile.Error{Field: "network.ports", Value: "[80]", Err: errors.New("ports apply to loopback mode only")}, `network.ports "[80]": ports apply to loopback mode only`, true},
		{&profile.Error{Line: 1, Column: 1, Err: errors.New("want an object, not array")}, "want an object, not array", true},
		{&cage.UnsupportedError{OSBuild: "linux", What: "spawning a caged process needs macOS Seatbelt"}, "unsupported on linux: spawning a caged process needs macOS Seatbelt", true},
		{&inputError{where: "--backend linux", err: fmt.Errorf("not here: %w", errors.ErrUnsupported)}, "--backend linux: not here", true},
		{errors.New("cage: profile: something broke"), "something broke", false},
	}
	for _, tt := range tests {
		got := describe(tt.err)
		if tt.want != "" && got != tt.want {
			t.Errorf("describe(%v) = %q, want %q", tt.err, got, tt.want)
		}
		if isBadInput(tt.err) != tt.bad {
			t.Errorf("isBadInput(%v) = %v, want %v", tt.err, !tt.bad, tt.bad)
		}
	}
}
