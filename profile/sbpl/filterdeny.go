package sbpl

import "slices"

// FilterDenies returns rules with each deny that has no filter given one
// matching every access of its file, exec and network operations, so it
// overrides filtered allows under any precedence Seatbelt may follow:
// Homebrew's tests (Library/Homebrew/test/sandbox_spec.rb, "#allow_write")
// show filtered allows written before an unfiltered (deny file-write*)
// still allowing, and microsoft/mxc#754 quotes a measurement that an
// unfiltered rule does not override a filtered one in either order.
// Operations with no such filter stay in an unfiltered rule of their own.
// Allows and filtered denies are returned as they are.
func FilterDenies(rules []Rule) []Rule {
	out := make([]Rule, 0, len(rules))
	for _, r := range rules {
		if r.Effect != Deny || len(r.Filters) > 0 {
			out = append(out, r)
			continue
		}
		var filtered, rest []string
		var filters []*Filter
		for _, op := range r.Ops {
			f := everywhere(op)
			if f == nil {
				rest = append(rest, op)
				continue
			}
			filtered = append(filtered, op)
			for _, x := range f {
				if !slices.ContainsFunc(filters, func(y *Filter) bool { return filterEqual(x, y) }) {
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

// everywhere returns filters that match every access of op, or nil when
// none is known: (subpath "/") for file operations and exec, any address
// of either end for network operations ((remote ip "*:*") is what Codex
// uses for "any host").
func everywhere(op string) []*Filter {
	switch {
	case op == "default":
	case Covers("file*", op) || Covers("process-exec*", op) || op == "process-exec":
		return []*Filter{Subpath("/")}
	case Covers("network*", op):
		return []*Filter{
			F("remote", Sym("ip"), "*:*"), F("remote", Sym("unix-socket"), Subpath("/")),
			F("local", Sym("ip"), "*:*"), F("local", Sym("unix-socket"), Subpath("/")),
		}
	}
	return nil
}

func filterEqual(a, b *Filter) bool {
	at, err1 := (&Rule{Ops: []string{"default"}, Filters: []*Filter{a}}).Text()
	bt, err2 := (&Rule{Ops: []string{"default"}, Filters: []*Filter{b}}).Text()
	return err1 == nil && err2 == nil && at == bt
}
