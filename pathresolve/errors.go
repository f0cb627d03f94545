package pathresolve

import (
	"errors"
	"fmt"
)

// Sentinel errors carried by [*PathError]; test for them with [errors.Is],
// never with ==, because they are always wrapped.
var (
	// ErrNotAbsolute: the path is empty or does not start with "/";
	// policy paths are always absolute.
	ErrNotAbsolute = errors.New("path is not absolute")
	// ErrNotNormal: the path has a "." or ".." component, a repeated slash
	// or a trailing slash; write it without them.
	ErrNotNormal = errors.New("path is not normalised")
	// ErrNUL: the path contains a NUL byte, which no system call accepts.
	ErrNUL = errors.New("path contains a NUL byte")
	// ErrLoop: resolving the path followed more symbolic links than the
	// kernel would (see [MaxSymlinks]), usually because of a link cycle.
	ErrLoop = errors.New("too many levels of symbolic links")
	// ErrCaseSensitive is matched by every [*CaseSensitiveError].
	ErrCaseSensitive = errors.New("path is on a case-sensitive volume")
	// ErrFirmlinkSyntax: a firmlink list line is malformed.
	ErrFirmlinkSyntax = errors.New("malformed firmlink line")
)

// PathError reports a path that cannot be resolved: invalid input, or a
// component whose lookup failed for a reason other than not existing.
//
// Path is the path as written. Component is the leading part of the path up
// to and including the component at fault: for invalid input a prefix of
// Path (e.g. "/a/.."), for a failed lookup the kernel spelling of the path
// that was looked up (e.g. "/private/tmp/locked/x"). Err is one of the
// sentinels above or the file system's error, so
// errors.Is(err, fs.ErrPermission) holds for EACCES.
type PathError struct {
	Path      string
	Component string
	Err       error
}

func (e *PathError) Error() string {
	if e.Component == "" || e.Component == e.Path {
		return fmt.Sprintf("pathresolve: %q: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("pathresolve: %q: at %q: %v", e.Path, e.Component, e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

// CaseSensitiveError is returned (by the cage, not by this package) when an
// allow rule names a path on a case-sensitive volume. Seatbelt matches paths
// case-insensitively on every volume (project specification, spelling
// matrix), so such a rule would also allow the name's case variants, which
// are different files there. Keep allowed paths on a case-insensitive
// volume, or use only deny rules there.
type CaseSensitiveError struct {
	Path   string // the policy path, kernel spelling
	Volume string // its longest existing prefix, whose volume is case-sensitive
}

func (e *CaseSensitiveError) Error() string {
	return fmt.Sprintf("pathresolve: %q is on a case-sensitive volume (checked at %q)", e.Path, e.Volume)
}

// Is reports whether target is [ErrCaseSensitive].
func (e *CaseSensitiveError) Is(target error) bool { return target == ErrCaseSensitive }
