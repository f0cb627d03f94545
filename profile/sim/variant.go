package sim

import "strings"

// Variant selects a reading of the Seatbelt rules public evidence has not
// settled. The zero value, [Default], is the reading the evidence favours;
// each field names an alternative. A lowering procage relies on must be
// right under every variant ([Variants]); the darwin test
// TestVariantsOnSeatbelt (sim_darwin_test.go) records which one macOS
// follows, case by case.
type Variant struct {
	// Unfiltered is how a rule without filters ranks against filtered
	// rules.
	Unfiltered Unfiltered
	// Specificity is how the operation a rule names ranks it.
	Specificity Specificity
	// SameSandboxNotSelf: (target same-sandbox) does not match the process
	// itself. Apple documents no meaning for the target values. Chromium
	// writes (target self) to let a process signal itself (crbug 20370);
	// Codex's base policy and Nix's sandbox-defaults.sb allow signals only
	// with (target same-sandbox), which suggests it covers the process
	// itself too [unmeasured]. Decided by the TestVariantsOnSeatbelt case
	// "same-sandbox: signal self".
	SameSandboxNotSelf bool
	// Link is which path of file-link and file-clone the operation is
	// checked on.
	Link Link
	// DefaultCoversStragglers: (deny default) also denies process-info*,
	// nvram*, iokit-get-properties and file-map-executable. The default
	// reading is that it does not: Chromium's renderer.sb denies them
	// explicitly "because these operations are allowed by default" (crbug
	// 799149) and Apple's Security-project profiles follow (deny default)
	// with (deny file-map-executable process-info* nvram*); neither is a
	// measurement on a current macOS. Decided by the TestVariantsOnSeatbelt
	// case "deny default: nvram-get".
	DefaultCoversStragglers bool
}

// Default is the reading the evidence favours; [Decide] uses it.
var Default Variant

// Unfiltered ranks rules without filters.
type Unfiltered int

const (
	// UnfilteredFallback (the default): per operation, filtered rules
	// decide (last match wins among them); an unfiltered rule decides only
	// when no filtered rule naming the same operation matches. Evidence:
	// Homebrew's SEATBELT template (Library/Homebrew/extend/os/mac/sandbox.rb)
	// puts filtered (allow file-write* (subpath ...)) rules before an
	// unfiltered (deny file-write*), and its macOS tests
	// (Library/Homebrew/test/sandbox_spec.rb: "#allow_write", "allows chmod
	// on a path allowed to write") expect those writes to succeed;
	// microsoft/mxc#754 quotes a measurement that an unfiltered allow does
	// not override a path-filtered deny in either order. Operation
	// specificity ranks first: an unfiltered rule naming file-write-setugid
	// beats a filtered one naming file-write* [unmeasured]. Decided by the
	// TestVariantsOnSeatbelt cases "unfiltered: ...".
	UnfilteredFallback Unfiltered = iota
	// UnfilteredLast: an unfiltered rule takes part in "last match wins"
	// like any other (this simulator before the Homebrew evidence).
	UnfilteredLast
	// UnfilteredBelowAll: an unfiltered rule decides only when no filtered
	// rule of any covering operation matches, so a filtered file-write*
	// allow beats an unfiltered file-write-setugid deny (filters rank
	// before operation specificity) [unmeasured]. Decided by the
	// TestVariantsOnSeatbelt case "unfiltered: specific deny after filtered
	// wildcard allow".
	UnfilteredBelowAll
)

// Specificity ranks rules by the operation they name.
type Specificity int

const (
	// SpecificityNested (the default): a concrete operation beats any
	// wildcard whatever the order, and a narrower wildcard (file-read*) a
	// wider one (file*). agent-safehouse (tests/policy/integrations/
	// ssh.bats, docs) reports a file-read-metadata deny beating a later
	// file-read* allow, and fence (internal/sandbox/macos.go) re-emits
	// denies per concrete operation because a later file-read* deny does
	// not override a file-read-data allow; the order among wildcards is
	// inferred. Decided by the TestVariantsOnSeatbelt cases
	// "specificity: ...".
	SpecificityNested Specificity = iota
	// SpecificityConcrete: a concrete operation beats any wildcard, but
	// wildcards rank alike (file-read* and file* by order).
	SpecificityConcrete
	// SpecificityNone: the operation does not rank a rule; the last
	// matching rule wins whether it names file-read-data or file-read*
	// (only a default rule still ranks below every other).
	SpecificityNone
)

// Link says which path file-link and file-clone are checked on: the new
// name ([Access.Path]) or the existing file ([Access.Source]). Whether a
// process can hard-link a denied file into an allowed directory is open
// (the Protonk VFS report notes that vnode-to-path reconstruction is not
// unique with hard links; stacklok/mecatl lists hard links as an escape
// class to test). Decided by the TestVariantsOnSeatbelt cases "link: ...".
type Link int

const (
	// LinkBoth (the default): both paths are checked; either denial
	// denies [unmeasured: the MAC hook for link(2) sees both the source
	// vnode and the new name, xnu's mac_vnode_check_link].
	LinkBoth Link = iota
	// LinkDestination: only the new name is checked.
	LinkDestination
	// LinkSource: only the existing file is checked.
	LinkSource
)

// Variants returns every combination of the alternatives, [Default] first.
func Variants() []Variant {
	out := []Variant{Default}
	for _, u := range []Unfiltered{UnfilteredFallback, UnfilteredLast, UnfilteredBelowAll} {
		for _, sp := range []Specificity{SpecificityNested, SpecificityConcrete, SpecificityNone} {
			for _, self := range []bool{false, true} {
				for _, l := range []Link{LinkBoth, LinkDestination, LinkSource} {
					for _, dflt := range []bool{false, true} {
						v := Variant{Unfiltered: u, Specificity: sp, SameSandboxNotSelf: self, Link: l, DefaultCoversStragglers: dflt}
						if v != Default {
							out = append(out, v)
						}
					}
				}
			}
		}
	}
	return out
}

// Alternatives returns the variants that differ from [Default] in one
// rule only, in the order of the fields.
func Alternatives() []Variant {
	return []Variant{
		{Unfiltered: UnfilteredLast}, {Unfiltered: UnfilteredBelowAll},
		{Specificity: SpecificityConcrete}, {Specificity: SpecificityNone},
		{SameSandboxNotSelf: true},
		{Link: LinkDestination}, {Link: LinkSource},
		{DefaultCoversStragglers: true},
	}
}

// String names the variant by its alternatives, "default" for none.
func (v Variant) String() string {
	var parts []string
	switch v.Unfiltered {
	case UnfilteredLast:
		parts = append(parts, "unfiltered-last")
	case UnfilteredBelowAll:
		parts = append(parts, "unfiltered-below-all")
	}
	switch v.Specificity {
	case SpecificityConcrete:
		parts = append(parts, "specificity-concrete")
	case SpecificityNone:
		parts = append(parts, "specificity-none")
	}
	if v.SameSandboxNotSelf {
		parts = append(parts, "same-sandbox-not-self")
	}
	switch v.Link {
	case LinkDestination:
		parts = append(parts, "link-destination")
	case LinkSource:
		parts = append(parts, "link-source")
	}
	if v.DefaultCoversStragglers {
		parts = append(parts, "default-covers-stragglers")
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, ",")
}
