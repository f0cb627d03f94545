package linux

import (
	"fmt"
	"slices"
	"strings"

	"github.com/procage-go/procage/internal/plantext"
	"github.com/procage-go/procage/profile"
)

// The hard-deny classes on Linux read the one table in profile
// (profile.ProtectedTable). Landlock only adds access, so the table is kept
// in two ways: a rule on a protected path or beneath one loses the rights
// the class refuses there (as a Seatbelt deny beats an allow), and a tree
// rule that holds a protected path cannot carve it out, which is a gap.

// Denial is a rule's rights a hard-deny class took away: Path lies at or
// beneath the class's protected Protected.
type Denial struct {
	// Class is the hard-deny class that took the rights.
	Class profile.Class
	// Protected is the protected entry's path, with a "*" for a prefix
	// (".git" for every git directory).
	Protected string
	// Path is the rule's path.
	Path string
	// Layer is the rule's layer: policy or grant.
	Layer Layer
	// Access is what was taken away.
	Access FSAccess
}

// String describes the denial on one line, as the plan's text shows it
// (paths quoted as [Plan.String] quotes them).
func (d Denial) String() string {
	return fmt.Sprintf("%s: %s %s loses %s (protected %s)", plantext.Word(string(d.Class)), plantext.Word(string(d.Layer)), plantext.Word(d.Path), d.Access, plantext.Word(d.Protected))
}

// fsProtected maps a class's protection to the Landlock rights it refuses.
func fsProtected(p profile.Protection) FSAccess {
	var a FSAccess
	if p&profile.ProtectRead != 0 {
		a |= fsRead | fsExec
	}
	if p&profile.ProtectWrite != 0 {
		a |= fsWrite | FSMakeChar | FSMakeBlock | FSIoctlDev
	}
	return a
}

// classGap is the gap a class's protected path inside an allowed tree is.
func classGap(c profile.Class) profile.Gap {
	if c == profile.TrustHandoff {
		return profile.GapTrustHandoff
	}
	return profile.GapSecrets
}

// hardDeny is the table placed in one environment, for the classes in
// force.
type hardDeny struct {
	entries []profile.ProtectedPath
}

func newHardDeny(p profile.Policy, env profile.Env) *hardDeny {
	h := &hardDeny{}
	for _, e := range profile.ProtectedTable("linux") {
		if p.Waived(e.Class) {
			continue
		}
		h.entries = append(h.entries, e.Places(env)...)
	}
	return h
}

// apply returns r without the rights a class refuses on a protected path
// it lies at or beneath (the denials say which), and a gap part for each
// class with protected paths inside r's tree (tree: r is a directory
// rule) that r grants a refused right on.
func (h *hardDeny) apply(r PathRule, tree bool) (PathRule, []Denial, []profile.GapPart) {
	var denials []Denial
	for _, e := range h.entries {
		if refused := fsProtected(e.Protect); r.Access&refused != 0 && e.Covers(r.Path) {
			denials = append(denials, Denial{Class: e.Class, Protected: protectedName(e), Path: r.Path, Layer: r.Layer, Access: r.Access & refused})
			r.Access &^= refused
		}
	}
	if !tree {
		return r, denials, nil
	}
	inside := map[profile.Class][]string{}
	var classes []profile.Class
	for _, e := range h.entries {
		if r.Access&fsProtected(e.Protect) == 0 || !e.Inside(r.Path) {
			continue
		}
		if !slices.Contains(classes, e.Class) {
			classes = append(classes, e.Class)
		}
		inside[e.Class] = append(inside[e.Class], protectedName(e))
	}
	var parts []profile.GapPart
	for _, c := range classes {
		parts = append(parts, profile.GapPart{Gap: classGap(c), Class: c, Path: r.Path, Protected: inside[c],
			Detail: fmt.Sprintf("%s protects %s inside the %s tree %s", c, listSome(inside[c]), verb(r), r.Path)})
	}
	return r, denials, parts
}

// listSome joins the first few names and counts the rest.
func listSome(names []string) string {
	const some = 3
	if len(names) <= some {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:some], ", "), len(names)-some)
}

// gitName is how a gap or a denial names every git directory: the name
// of profile's AnchorAnyTree entry.
const gitName = ".git"

// protectedName names an entry in a gap or a denial: its path, with a
// "*" for a prefix, and ".git" for every git directory.
func protectedName(e profile.ProtectedPath) string {
	switch {
	case e.Anchor == profile.AnchorAnyTree:
		return e.Name
	case e.Prefix:
		return e.Path + "*"
	}
	return e.Path
}

// verb says what r allows, for a gap's text.
func verb(r PathRule) string {
	w := "readable"
	if r.Access&fsWrite != 0 {
		w = "writable"
	}
	if r.Layer == LayerPolicy {
		return w
	}
	return w + " " + string(r.Layer)
}

// covers reports whether a class in force protects p itself (a Unix
// socket, which Landlock cannot filter before ABI 9), and the entry.
func (h *hardDeny) covers(p string) (profile.ProtectedPath, bool) {
	for _, e := range h.entries {
		if e.Covers(p) {
			return e, true
		}
	}
	return profile.ProtectedPath{}, false
}
