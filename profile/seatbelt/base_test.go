package seatbelt

import (
	"slices"
	"strings"
	"testing"

	"github.com/procage-go/procage/internal/golden"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
)

// update rewrites the golden profiles: go test ./profile/seatbelt -update.

// testHome is the home directory the golden profiles are lowered for.
const testHome = "/Users/alice"

// onlyClass returns the waivers that leave class c alone in force ("" =
// every class waived).
func onlyClass(c profile.Class) profile.Option {
	var waive []profile.Class
	for _, k := range profile.Classes() {
		if k != c {
			waive = append(waive, k)
		}
	}
	return profile.Waive(waive...)
}

func TestGoldenBase(t *testing.T) {
	cases := []struct {
		name   string
		class  profile.Class // "" = every class waived
		reason string
	}{
		{"base-v1.sb", "", "Base V1 alone: what every profile starts from, frozen once released"},
		{"process-access.sb", profile.ProcessAccess, "R-25 rules: procargs sysctls, other processes' info, signals, task ports, sysmond, setugid"},
		{"secrets.sb", profile.Secrets, "credential stores, keychains and keychain services, with move-blocking"},
		{"trust-handoff.sb", profile.TrustHandoff, "git hooks and config in any tree, shell startup files, launch agents"},
		{"service-manager.sb", profile.ServiceManager, "Launch Services, launchd job submission, container-engine sockets and Mach names"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mustNew(t, onlyClass(tc.class))
			plan := mustLower(t, p, profile.Env{Home: testHome})
			text := plan.Text()
			if tc.class != "" && !strings.Contains(text, ";; "+LayerHardDeny) {
				t.Fatalf("%s: class %s emitted no hard-deny layer", tc.reason, tc.class)
			}
			if tc.class == "" && strings.Contains(text, ";; "+LayerHardDeny) {
				t.Fatalf("%s: a hard-deny layer with every class waived", tc.reason)
			}
			golden.Check(t, "base/"+tc.name, text)
		})
	}
}

// pathArgs returns every string argument of the path filters in fs, regexes
// included (their leading ^ removed).
func pathArgs(fs []*sbpl.Filter) []string {
	var out []string
	var walk func(f *sbpl.Filter)
	walk = func(f *sbpl.Filter) {
		switch f.Name {
		case "literal", "subpath", "prefix", "path", "path-literal", "path-prefix", "path-ancestors", "regex", "path-regex":
			if len(f.Args) == 1 {
				if s, ok := f.Args[0].(sbpl.Str); ok {
					out = append(out, strings.TrimPrefix(string(s), "^"))
				}
			}
			return
		}
		for _, a := range f.Args {
			if sub, ok := a.(*sbpl.Filter); ok {
				walk(sub)
			}
		}
	}
	for _, f := range fs {
		walk(f)
	}
	return out
}

// notKernelSpelling reports a path under one of the root links, which
// Seatbelt never matches (Protonk VFS report; agent-sandbox.nix#82).
func notKernelSpelling(path string) bool {
	for _, l := range RootLinks {
		if path == l || strings.HasPrefix(path, l+"/") {
			return true
		}
	}
	return false
}

func TestBaseV1Structure(t *testing.T) {
	rules := baseRules(profile.BaseV1)
	if len(rules) == 0 {
		t.Fatal("Base V1 has no rules")
	}
	// Operations that, unfiltered, would open a whole class of resources.
	broad := []string{"sysctl-read", "file-read-data", "file-read-metadata", "mach-lookup", "process-exec", "file-write-data", "signal", "process-info-pidinfo", "network-outbound"}
	for i, r := range rules {
		text, err := r.Text()
		if err != nil {
			t.Fatalf("rule %d: %v", i, err)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("rule %d %s: %v", i, text, err)
		}
		if r.Comment == "" {
			t.Errorf("rule %d %s has no comment", i, text)
		}
		if r.Effect != sbpl.Allow {
			t.Errorf("rule %d %s: a base only allows; denies belong to the header or a hard-deny class", i, text)
		}
		for _, m := range r.Modifiers {
			if m.Name == "no-sandbox" {
				t.Errorf("rule %d %s carries (with no-sandbox)", i, text)
			}
		}
		if len(r.Filters) == 0 {
			for _, op := range r.Ops {
				for _, b := range broad {
					if sbpl.Covers(op, b) {
						t.Errorf("rule %d %s: unfiltered %s", i, text, op)
					}
				}
			}
		}
		for _, p := range pathArgs(r.Filters) {
			if notKernelSpelling(p) {
				t.Errorf("rule %d %s: %q is not the kernel spelling (use /private/...)", i, text, p)
			}
			if p == "/" && slices.ContainsFunc(r.Filters, func(f *sbpl.Filter) bool { return f.Name == "subpath" }) {
				t.Errorf("rule %d %s: a subpath of / opens the whole disk", i, text)
			}
		}
		if strings.Contains(text, "(subpath \"/\")") {
			t.Errorf("rule %d %s: (subpath \"/\") opens the whole disk", i, text)
		}
	}
}

// baseAllows reports whether some Base V1 allow naming an operation that
// covers op has a filter equal to f.
func baseAllows(op string, f *sbpl.Filter) bool {
	want := f.String()
	for _, r := range baseRules(profile.BaseV1) {
		if r.Effect != sbpl.Allow || !slices.ContainsFunc(r.Ops, func(o string) bool { return sbpl.Covers(o, op) }) {
			continue
		}
		for _, g := range r.Filters {
			if g.String() == want {
				return true
			}
		}
	}
	return false
}

func TestBaseV1Needs(t *testing.T) {
	cases := []struct {
		op     string
		filter *sbpl.Filter
		reason string
	}{
		{"process-exec", sbpl.Subpath("/bin"), "sh, zsh, bash, cat"},
		{"process-exec", sbpl.Subpath("/usr/bin"), "id, awk, perl, tar, gzip"},
		{"process-exec", sbpl.Subpath("/usr/libexec"), "helpers the system programs run"},
		{"process-exec", sbpl.Subpath("/sbin"), "system programs"},
		{"process-exec", sbpl.Subpath("/usr/sbin"), "system programs"},
		{"file-map-executable", sbpl.Subpath("/System/Volumes/Preboot/Cryptexes/OS"), "the dyld shared cache"},
		{"file-map-executable", sbpl.Subpath("/usr/lib"), "libSystem and dyld"},
		{"file-read-data", sbpl.Literal("/private/var/select/sh"), "/bin/sh reads its select link"},
		{"file-write-data", sbpl.Literal("/dev/null"), "redirections to /dev/null"},
		{"file-ioctl", sbpl.Literal("/dev/tty"), "tty ioctls"},
		{"sysctl-read", sbpl.F("sysctl-name", "kern.osrelease"), "uname -r"},
		{"sysctl-read", sbpl.F("sysctl-name", "kern.hostname"), "uname -n, os.Hostname"},
		{"mach-lookup", sbpl.F("global-name", "com.apple.system.opendirectoryd.libinfo"), "id and getpwuid"},
		{"signal", sbpl.F("target", sbpl.Sym("same-sandbox")), "signals within the run"},
	}
	for _, tc := range cases {
		if !baseAllows(tc.op, tc.filter) {
			t.Errorf("Base V1 does not allow %s %s (%s)", tc.op, tc.filter, tc.reason)
		}
	}
}

// The realpath() decision: Base V1 gives metadata of each ancestor of what
// it names, never of the whole disk.
func TestBaseV1AncestorMetadata(t *testing.T) {
	got := v1Ancestors()
	for _, want := range []string{"/", "/System", "/System/Volumes/Preboot/Cryptexes", "/private", "/private/var", "/private/var/select", "/dev", "/usr"} {
		if !slices.Contains(got, want) {
			t.Errorf("v1Ancestors() lacks %s: %v", want, got)
		}
	}
	for _, p := range got {
		if p == "/Users" || strings.HasPrefix(p, "/Users/") {
			t.Errorf("v1Ancestors() names %s, under the home directories", p)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("v1Ancestors() is not sorted: %v", got)
	}
}
