package seatbelt

import (
	"errors"
	"fmt"
	"slices"

	"github.com/procage-go/procage/profile/sbpl"
)

// ErrUnfilteredDeny is returned by [Lower] for a deny without filters that
// would have to override a filtered allow of another layer: whether an
// unfiltered rule overrides a filtered one is not settled for Seatbelt
// (Homebrew's sandbox tests, Library/Homebrew/test/sandbox_spec.rb, rely on
// it not doing so), so procage refuses to depend on it. Give the deny a
// filter.
var ErrUnfilteredDeny = errors.New("seatbelt: an unfiltered deny cannot override a filtered allow")

// overlaps reports whether a rule naming a and one naming b can apply to
// the same concrete operation.
func overlaps(a, b string) bool {
	if a == "default" || b == "default" {
		return false
	}
	a, b = canonicalExec(a), canonicalExec(b)
	return a == b || sbpl.Covers(a, b) || sbpl.Covers(b, a)
}

func canonicalExec(op string) string {
	if op == "process-exec" {
		return "process-exec*"
	}
	return op
}

// checkUnfiltered refuses a deny without filters among rules[from:] that
// a filtered allow among rules[:before] names an overlapping operation
// of: Seatbelt may let that allow win (see ErrUnfilteredDeny).
func checkUnfiltered(rules []sbpl.Rule, before, from int) error {
	for _, d := range rules[from:] {
		if d.Effect != sbpl.Deny || len(d.Filters) > 0 {
			continue
		}
		for _, a := range rules[:before] {
			if a.Effect != sbpl.Allow || len(a.Filters) == 0 {
				continue
			}
			for _, dop := range d.Ops {
				if slices.ContainsFunc(a.Ops, func(aop string) bool { return overlaps(aop, dop) }) {
					text, _ := d.Text()
					return fmt.Errorf("%w: %s", ErrUnfilteredDeny, text)
				}
			}
		}
	}
	return nil
}
