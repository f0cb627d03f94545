package pathresolve

import (
	"errors"
	"fmt"
	"strings"
)

// Tree is a directory tree a policy grants (a subpath rule or a grant),
// in kernel spelling.
type Tree struct {
	Path     string
	Writable bool // the caged child may write it
}

// ErrSuspectLink is matched by every [*LinkError].
var ErrSuspectLink = errors.New("path resolves through a link a caged child could have planted")

// LinkError reports a policy path or grant whose resolution passes through
// a symbolic link that could redirect it: a link inside a tree the policy
// grants, leading out of that tree (in a writable tree a caged child could
// have planted it, in this run or an earlier one) or moving a write grant
// within a tree the child may only read, or a link leading to one of its
// own ancestors (proj/build/cache -> $HOME turns a grant of the
// cache into a grant of the home directory). errors.Is(err,
// [ErrSuspectLink]) holds.
type LinkError struct {
	Path     string // the policy path or grant as written
	Link     string // the symbolic link, kernel spelling
	Resolved string // where Path resolved, kernel spelling
	Tree     string // the tree holding Link; "" for a link to its own ancestor
	Writable bool   // Tree is writable by the child
}

func (e *LinkError) Error() string {
	switch {
	case e.Tree == "":
		return fmt.Sprintf("pathresolve: %q resolves through link %q to its ancestor %q", e.Path, e.Link, e.Resolved)
	case e.Writable:
		return fmt.Sprintf("pathresolve: %q resolves through link %q in writable tree %q to %q", e.Path, e.Link, e.Tree, e.Resolved)
	}
	return fmt.Sprintf("pathresolve: %q resolves through link %q in tree %q to %q", e.Path, e.Link, e.Tree, e.Resolved)
}

// Is reports whether target is [ErrSuspectLink].
func (e *LinkError) Is(target error) bool { return target == ErrSuspectLink }

// CheckLinks refuses a resolution res, of a path granted write if write is
// set, that passes through a symbolic link which could redirect it (see
// [LinkError]): a link strictly inside one of trees while res.Path lies
// outside that tree (or, for a write grant, inside a tree that is not
// writable: the link would move the write to another part of it), or a
// link that leads to its own ancestor (or itself). A link for which accepted
// returns true (nil accepts none) is the caller's explicit choice and is
// not checked. Paths are compared case-insensitively, as Seatbelt and the
// default macOS volume compare them; a component with a non-ASCII letter
// is taken to be possibly any other such component when placing the link
// in a tree (so a link under a sibling with such a name may be refused:
// accept it by name).
//
// A link outside every tree that leads elsewhere (a symlinked home, the
// /tmp and /var links, a redirected ~/Documents) passes: nothing in the
// policy lets a child plant it.
func CheckLinks(res Result, write bool, trees []Tree, accepted func(link string) bool) error {
	for _, rw := range res.Rewrites {
		if rw.Reason != ReasonSymlink {
			continue
		}
		link := rw.Via
		if accepted != nil && accepted(link) {
			continue
		}
		fail := func(t Tree) error {
			return &LinkError{Path: res.Input, Link: link, Resolved: res.Path, Tree: t.Path, Writable: t.Writable}
		}
		if target, ok := linkTarget(rw, link); ok && mayBeWithin(link, target) {
			return &LinkError{Path: res.Input, Link: link, Resolved: res.Path}
		}
		// A writable tree first, so the error names the worst case. Each
		// test errs towards refusing: the link may be in the tree, the
		// result is in it only if spelled alike.
		for _, w := range []bool{true, false} {
			for _, t := range trees {
				if t.Writable == w && link != t.Path && mayBeWithin(link, t.Path) && (!within(res.Path, t.Path) || write && !t.Writable) {
					return fail(t)
				}
			}
		}
	}
	return nil
}

// linkTarget returns where the link itself led in rw: rw.To without the
// components of rw.From that follow the link.
func linkTarget(rw Rewrite, link string) (string, bool) {
	rest := strings.Count(rw.From, "/") - strings.Count(link, "/")
	to := rw.To
	for ; rest > 0; rest-- {
		i := strings.LastIndexByte(to, '/')
		if i < 0 {
			return "", false
		}
		to = to[:i]
	}
	if to == "" {
		to = "/"
	}
	return to, rest == 0
}

// within reports whether p is root or below it, ignoring case.
func within(p, root string) bool {
	p, root = strings.ToLower(p), strings.ToLower(root)
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// mayBeWithin is within where a component with a non-ASCII letter may
// equal any other such component: the resolver keeps the caller's
// spelling, and Seatbelt and APFS take an NFC and an NFD name for the same
// one (café typed, café listed from disk), which the package cannot fold
// without Unicode tables. It errs towards "within".
func mayBeWithin(p, root string) bool {
	if root == "/" {
		return true
	}
	pc, rc := strings.Split(p, "/"), strings.Split(root, "/")
	if len(pc) < len(rc) {
		return false
	}
	for i, c := range rc {
		if !strings.EqualFold(c, pc[i]) && !(nonASCII(c) && nonASCII(pc[i])) {
			return false
		}
	}
	return true
}

func nonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}
