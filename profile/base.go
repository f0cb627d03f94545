package profile

import "github.com/procage-go/procage/profile/sbpl"

// baseRules returns the rules of a base, each with a comment saying why
// and from where. PLACEHOLDER: the curated Base V1 content lands with the
// Base V1 issue.
func baseRules(b Base) []sbpl.Rule {
	switch b {
	case BaseV1:
		return []sbpl.Rule{
			{Effect: sbpl.Allow, Ops: []string{"file-read*", "file-map-executable"}, Filters: []*sbpl.Filter{sbpl.Subpath("/usr/lib"), sbpl.Subpath("/System/Library")}, Comment: "dyld: system libraries and frameworks (sbpl.md §12)"},
		}
	}
	return nil
}
