package profile

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
var ErrUnfilteredDeny = errors.New("profile: an unfiltered deny cannot override a filtered allow")

// everywhere returns filters that match every access of op, or nil when
// none is known: (subpath "/") for file operations and exec, any address
// of either end for network operations ((remote ip "*:*") is what Codex and
// procage's network-on grant use for "any host").
func everywhere(op string) []*sbpl.Filter {
	switch {
	case op == "default":
	case sbpl.Covers("file*", op) || sbpl.Covers("process-exec*", op) || op == "process-exec":
		return []*sbpl.Filter{sbpl.Subpath("/")}
	case sbpl.Covers("network*", op):
		return []*sbpl.Filter{
			sbpl.F("remote", sbpl.Sym("ip"), "*:*"), sbpl.F("remote", sbpl.Sym("unix-socket"), sbpl.Subpath("/")),
			sbpl.F("local", sbpl.Sym("ip"), "*:*"), sbpl.F("local", sbpl.Sym("unix-socket"), sbpl.Subpath("/")),
		}
	}
	return nil
}

// filterDenies gives each unfiltered deny a filter matching every access
// of its file, exec and network operations, so it overrides filtered
// allows under any precedence Seatbelt may follow: Homebrew's tests
// (Library/Homebrew/test/sandbox_spec.rb, "#allow_write") show filtered
// allows written before an unfiltered (deny file-write*) still allowing,
// and microsoft/mxc#754 quotes a measurement that an unfiltered rule does
// not override a filtered one in either order. Operations with no such
// filter stay in an unfiltered rule of their own.
func filterDenies(rules []sbpl.Rule) []sbpl.Rule {
	out := make([]sbpl.Rule, 0, len(rules))
	for _, r := range rules {
		if r.Effect != sbpl.Deny || len(r.Filters) > 0 {
			out = append(out, r)
			continue
		}
		var filtered, rest []string
		var filters []*sbpl.Filter
		for _, op := range r.Ops {
			f := everywhere(op)
			if f == nil {
				rest = append(rest, op)
				continue
			}
			filtered = append(filtered, op)
			for _, x := range f {
				if !slices.ContainsFunc(filters, func(y *sbpl.Filter) bool { return filterEqual(x, y) }) {
					filters = append(filters, x)
				}
			}
		}
		if len(filtered) > 0 {
			fr := r
			fr.Ops, fr.Filters = filtered, filters
			out = append(out, fr)
		}
		if len(rest) > 0 {
			rr := r
			rr.Ops = rest
			if len(filtered) > 0 {
				rr.Comment = ""
			}
			out = append(out, rr)
		}
	}
	return out
}

func filterEqual(a, b *sbpl.Filter) bool {
	at, err1 := (&sbpl.Rule{Ops: []string{"default"}, Filters: []*sbpl.Filter{a}}).Text()
	bt, err2 := (&sbpl.Rule{Ops: []string{"default"}, Filters: []*sbpl.Filter{b}}).Text()
	return err1 == nil && err2 == nil && at == bt
}

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
