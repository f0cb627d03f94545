package sbpl

import "slices"

// Paths returns the string arguments of the rule's path filters
// ([IsPathFilter]), nested ones included, in order.
func (r *Rule) Paths() []string {
	var out []string
	var walk func(f *Filter)
	walk = func(f *Filter) {
		for _, a := range f.Args {
			switch v := a.(type) {
			case *Filter:
				walk(v)
			case Str:
				if IsPathFilter(f.Name) {
					out = append(out, string(v))
				}
			}
		}
	}
	for _, f := range r.Filters {
		walk(f)
	}
	return out
}

// MapPaths returns a copy of the rule whose path-filter arguments are
// replaced by f(path): how a caller's paths become kernel spellings. The
// rule itself is not modified.
func (r Rule) MapPaths(f func(string) string) Rule {
	var walk func(fl *Filter) *Filter
	walk = func(fl *Filter) *Filter {
		g := &Filter{Name: fl.Name, Args: slices.Clone(fl.Args)}
		for i, a := range g.Args {
			switch v := a.(type) {
			case *Filter:
				g.Args[i] = walk(v)
			case Str:
				if IsPathFilter(fl.Name) {
					g.Args[i] = Str(f(string(v)))
				}
			}
		}
		return g
	}
	out := r
	out.Filters = make([]*Filter, len(r.Filters))
	for i, fl := range r.Filters {
		out.Filters[i] = walk(fl)
	}
	return out
}
