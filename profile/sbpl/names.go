package sbpl

//go:generate go run ./internal/gennames -data internal/gennames/data -o znames.go

import (
	"sort"
	"strings"
)

// filterInfo describes one kernel filter from the generated table.
type filterInfo struct {
	code      int
	name      string
	valueType string   // PATTERN_LITERAL, INTEGER, ...; from the table
	values    []string // named values (aliases), if any
}

var (
	operationSet = func() map[string]bool {
		m := make(map[string]bool, len(operationNames))
		for _, op := range operationNames {
			m[op] = true
		}
		return m
	}()
	filterByName = func() map[string]filterInfo {
		m := make(map[string]filterInfo)
		for _, f := range filterTable {
			if f.code < 128 { // codes above 128 are the regex forms of the same name
				m[f.name] = f
			}
		}
		return m
	}()
	regexForm = func() map[string]bool {
		m := make(map[string]bool)
		for _, f := range filterTable {
			if f.code > 128 {
				m[f.name] = true
			}
		}
		return m
	}()
	modifierSet = func() map[string]bool {
		m := make(map[string]bool, len(modifierNames)+1)
		for _, n := range modifierNames {
			m[n] = true
		}
		// no-log is not in the modifier table but compiles: Chromium's and
		// Nix's shipped profiles use (with no-log) [confirmed: Chromium
		// common.sb, Nix sandbox-defaults.sb].
		m["no-log"] = true
		return m
	}()
)

// IsOperation reports whether op is a Seatbelt operation name known to
// libsandbox (macOS 14.4.1 table; see znames.go for provenance).
func IsOperation(op string) bool { return operationSet[op] }

// Operations returns every known operation name, sorted.
func Operations() []string {
	out := append([]string(nil), operationNames[:]...)
	sort.Strings(out)
	return out
}

// IsWildcard reports whether op names a family of operations ("file-read*").
func IsWildcard(op string) bool { return op == "default" || strings.HasSuffix(op, "*") }

// Covers reports whether a rule naming op applies to the concrete operation
// concrete: "default" covers everything, "file-read*" covers every operation
// whose name starts with "file-read", and a concrete name covers itself.
// Source: the operation families are name prefixes in libsandbox's table
// (znames.go); Chromium's design doc and Apple's profiles use them that way.
func Covers(op, concrete string) bool {
	switch {
	case op == "default":
		return true
	case strings.HasSuffix(op, "*"):
		return strings.HasPrefix(concrete, strings.TrimSuffix(op, "*"))
	default:
		return op == concrete
	}
}

// ConcreteOperations returns the concrete (non-wildcard) operations that op
// covers, sorted. For a concrete op it returns just op.
func ConcreteOperations(op string) []string {
	var out []string
	for _, o := range operationNames {
		if !IsWildcard(o) && Covers(op, o) {
			out = append(out, o)
		}
	}
	sort.Strings(out)
	return out
}

// pathFilters are the source spellings of the kernel's `path` filter, plus
// the forms used inside unix-socket and ancestor filters [confirmed:
// Chromium's design doc, Nix, agent-safehouse, Codex seatbelt.rs].
var pathFilters = map[string]bool{
	"literal": true, "subpath": true, "prefix": true, "regex": true,
	"path": true, "path-literal": true, "path-prefix": true, "path-regex": true,
	"path-ancestors": true,
}

// IsPathFilter reports whether the filter name takes a path string as its
// argument (literal, subpath, prefix, path, path-literal, path-prefix,
// path-ancestors). Regex forms are excluded: their argument is a pattern.
func IsPathFilter(name string) bool {
	return pathFilters[name] && !strings.HasSuffix(name, "regex")
}

// filterKind classifies a filter name written in SBPL source.
type filterKind int

const (
	kindUnknown filterKind = iota
	kindPath               // one path string
	kindLogic              // require-all / require-any / require-not
	kindNetwork            // local / remote
	kindString             // one string (literal, prefix or regex form of a named filter)
	kindInteger            // one integer or named value
)

// classify returns how a filter name is written, and the table entry behind
// it where there is one.
func classify(name string) (filterKind, filterInfo) {
	switch {
	case pathFilters[name]:
		return kindPath, filterByName["path"]
	case name == "require-all" || name == "require-any" || name == "require-not":
		return kindLogic, filterInfo{}
	case name == "local" || name == "remote":
		return kindNetwork, filterByName[name]
	}
	if f, ok := filterByName[name]; ok {
		if strings.HasPrefix(f.valueType, "PATTERN_") || f.valueType == "STRING" {
			return kindString, f
		}
		return kindInteger, f
	}
	// name-prefix and name-regex spell the prefix and regex forms of a
	// pattern filter, e.g. global-name-prefix, sysctl-name-regex.
	for _, suffix := range []string{"-prefix", "-regex"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		f, ok := filterByName[base]
		if !ok || !strings.HasPrefix(f.valueType, "PATTERN_") {
			continue
		}
		if suffix == "-regex" && !regexForm[base] {
			continue
		}
		return kindString, f
	}
	return kindUnknown, filterInfo{}
}
