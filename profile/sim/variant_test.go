package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/procage-go/procage/profile/sbpl"
)

// variantCase is a profile on which readings of Seatbelt disagree. The
// rules follow (version 1)(allow default), or (version 1) alone with
// ownDefault; dir is a directory holding the files f (regular, existing),
// in/ and out/ (directories) and in/s (regular). TestVariantsOnSeatbelt
// (darwin) attempts the access, or with check asks sandbox_check about it
// for a live sandboxed process, and records which variants agree with the
// kernel; TestVariantCases checks on any OS that each case tells its
// alternatives apart.
type variantCase struct {
	name       string
	decide     string // the Variant field the case settles
	rules      func(dir string) string
	access     func(dir string) Access
	ownDefault bool
	check      bool
	// want is the verdict under Default.
	want bool
}

// source is the case's whole profile.
func (c variantCase) source(dir string) string {
	if c.ownDefault {
		return "(version 1)" + c.rules(dir)
	}
	return "(version 1)(allow default)" + c.rules(dir)
}

func quoted(dir, rel string) string {
	s, err := sbpl.Quote(strings.TrimSuffix(dir+"/"+rel, "/"))
	if err != nil {
		panic(err)
	}
	return s
}

// rulesf formats rules with %[1]s as dir, %[2]s as dir/f, %[3]s as dir/in
// and %[4]s as dir/out, each quoted.
func rulesf(format string) func(string) string {
	return func(dir string) string {
		return fmt.Sprintf(format, quoted(dir, ""), quoted(dir, "f"), quoted(dir, "in"), quoted(dir, "out"))
	}
}

var variantCases = []variantCase{
	// Unfiltered against filtered (Variant.Unfiltered).
	{
		name: "unfiltered: filtered allow then unfiltered deny", decide: "Unfiltered",
		// Homebrew's shape: Library/Homebrew/extend/os/mac/sandbox.rb and
		// sandbox_spec.rb "#allow_write".
		rules: rulesf(`(allow file-write* (subpath %[1]s))(deny file-write*)`),
		access: func(dir string) Access {
			return Access{Op: "file-write-data", Path: dir + "/f", VnodeType: "REGULAR-FILE"}
		},
		want: true,
	},
	{
		name: "unfiltered: filtered deny then unfiltered allow", decide: "Unfiltered",
		// microsoft/mxc#754: an unfiltered allow does not override a
		// path-filtered deny.
		rules: rulesf(`(deny file-write* (subpath %[1]s))(allow file-write*)`),
		access: func(dir string) Access {
			return Access{Op: "file-write-data", Path: dir + "/f", VnodeType: "REGULAR-FILE"}
		},
		want: false,
	},
	{
		name: "unfiltered: specific deny after filtered wildcard allow", decide: "Unfiltered",
		// The shape of a hard deny such as (deny file-write-setugid) after
		// (allow file-write* (subpath P)).
		rules: rulesf(`(deny file-write*)(allow file-write* (subpath %[1]s))(deny file-write-data)`),
		access: func(dir string) Access {
			return Access{Op: "file-write-data", Path: dir + "/f", VnodeType: "REGULAR-FILE"}
		},
		want: false,
	},
	// Operation specificity (Variant.Specificity).
	{
		name: "specificity: specific allow then wildcard deny", decide: "Specificity",
		rules: rulesf(`(allow file-read-data (literal %[2]s))(deny file-read* (subpath %[1]s))`),
		access: func(dir string) Access {
			return Access{Op: "file-read-data", Path: dir + "/f", VnodeType: "REGULAR-FILE"}
		},
		want: true,
	},
	{
		name: "specificity: specific deny then wildcard allow", decide: "Specificity",
		rules: rulesf(`(deny file-read-data (literal %[2]s))(allow file-read* (subpath %[1]s))`),
		access: func(dir string) Access {
			return Access{Op: "file-read-data", Path: dir + "/f", VnodeType: "REGULAR-FILE"}
		},
		want: false,
	},
	{
		name: "specificity: narrower wildcard deny then wider allow", decide: "Specificity",
		rules: rulesf(`(deny file-read* (subpath %[1]s))(allow file* (subpath %[1]s))`),
		access: func(dir string) Access {
			return Access{Op: "file-read-data", Path: dir + "/f", VnodeType: "REGULAR-FILE"}
		},
		want: false,
	},
	{
		name: "specificity: narrower wildcard allow then wider deny", decide: "Specificity",
		rules: rulesf(`(allow file-read* (subpath %[1]s))(deny file* (subpath %[1]s))`),
		access: func(dir string) Access {
			return Access{Op: "file-read-data", Path: dir + "/f", VnodeType: "REGULAR-FILE"}
		},
		want: true,
	},
	// What (deny default) covers (Variant.DefaultCoversStragglers): every
	// family a sleeping process could need is allowed by name, nvram* is
	// left to the default rule.
	{
		name: "deny default: nvram-get", decide: "DefaultCoversStragglers", ownDefault: true, check: true,
		rules: func(string) string {
			return `(deny default)(allow file* process* mach* sysctl* ipc* signal system* network* pseudo-tty)`
		},
		access: func(string) Access { return Access{Op: "nvram-get"} },
		want:   true,
	},
	// same-sandbox and the process itself (Variant.SameSandboxNotSelf).
	{
		name: "same-sandbox: signal self", decide: "SameSandboxNotSelf",
		rules:  func(string) string { return `(deny signal)(allow signal (target same-sandbox))` },
		access: func(string) Access { return Access{Op: "signal", Target: "self"} },
		want:   true,
	},
	// Which path of a hard link is checked (Variant.Link).
	{
		name: "link: source denied", decide: "Link",
		rules: rulesf(`(deny file-link (subpath %[3]s))`),
		access: func(dir string) Access {
			return Access{Op: "file-link", Path: dir + "/out/l", Source: dir + "/in/s", VnodeType: "REGULAR-FILE"}
		},
		want: false,
	},
	{
		name: "link: destination denied", decide: "Link",
		rules: rulesf(`(deny file-link (subpath %[4]s))`),
		access: func(dir string) Access {
			return Access{Op: "file-link", Path: dir + "/out/l", Source: dir + "/in/s", VnodeType: "REGULAR-FILE"}
		},
		want: false,
	},
}

// variantVerdicts decides a case under every variant, by variant name.
func variantVerdicts(tb testing.TB, c variantCase, dir string) map[Variant]bool {
	tb.Helper()
	src := c.source(dir)
	prof, err := sbpl.Parse(src)
	if err != nil {
		tb.Fatalf("%s: Parse(%s): %v", c.name, src, err)
	}
	out := map[Variant]bool{}
	for _, v := range Variants() {
		d, err := v.Decide(prof, c.access(dir))
		if err != nil {
			tb.Fatalf("%s: variant %v: %v", c.name, v, err)
		}
		out[v] = d.Allowed
	}
	return out
}

// TestVariantCases: each case has the documented verdict under Default
// and a different one under some variant that changes its field, so the
// macOS run of the same case tells them apart.
func TestVariantCases(t *testing.T) {
	fields := map[string]bool{}
	for _, c := range variantCases {
		t.Run(c.name, func(t *testing.T) {
			// The darwin test compiles the same text: it must pass the
			// validator (known operations and filters).
			rules, err := sbpl.ParseRules(c.rules("/private/tmp/d"))
			if err != nil {
				t.Fatal(err)
			}
			for i := range rules {
				if err := rules[i].Validate(); err != nil {
					t.Error(err)
				}
			}
			got := variantVerdicts(t, c, "/private/tmp/d")
			if got[Default] != c.want {
				t.Errorf("Default decides %v, want %v", got[Default], c.want)
			}
			split := false
			for v, allowed := range got {
				if allowed != c.want && differsOnly(v, c.decide) {
					split = true
				}
			}
			if !split {
				t.Errorf("no variant differing from Default only in %s decides otherwise: the case cannot settle it (%v)", c.decide, got)
			}
			fields[c.decide] = true
		})
	}
	for _, f := range []string{"Unfiltered", "Specificity", "SameSandboxNotSelf", "Link", "DefaultCoversStragglers"} {
		if !fields[f] {
			t.Errorf("no case settles Variant.%s", f)
		}
	}
}

// differsOnly reports whether v differs from Default in field alone.
func differsOnly(v Variant, field string) bool {
	d := Default
	switch field {
	case "Unfiltered":
		d.Unfiltered = v.Unfiltered
	case "Specificity":
		d.Specificity = v.Specificity
	case "DefaultCoversStragglers":
		d.DefaultCoversStragglers = v.DefaultCoversStragglers
	case "SameSandboxNotSelf":
		d.SameSandboxNotSelf = v.SameSandboxNotSelf
	case "Link":
		d.Link = v.Link
	}
	return d == v && v != Default
}

func TestVariants(t *testing.T) {
	vs := Variants()
	if vs[0] != Default || Default.String() != "default" {
		t.Fatalf("Variants()[0] = %v, want Default", vs[0])
	}
	seen := map[string]bool{}
	for _, v := range vs {
		if seen[v.String()] {
			t.Errorf("variant %v listed twice", v)
		}
		seen[v.String()] = true
	}
	alts := Alternatives()
	for _, a := range alts {
		if strings.Contains(a.String(), ",") || a == Default || !slices.Contains(vs, a) {
			t.Errorf("Alternatives: %v is not a one-rule variant of Variants", a)
		}
	}
	if len(alts) != 2+2+1+2+1 {
		t.Errorf("%d alternatives, want one per value other than the default (8)", len(alts))
	}
	if len(vs) != 3*3*2*3*2 {
		t.Errorf("%d variants, want every combination (108)", len(vs))
	}
}
