package linux

import (
	"slices"
	"strings"
	"testing"

	"github.com/procage-go/procage/internal/sysnum"
	"github.com/procage-go/procage/profile"
)

// xsysTable returns the generated system call table for arch (x/sys at
// the version go.mod requires, which internal/sysnum's test keeps so),
// after checking the review covers that version.
func xsysTable(t *testing.T, arch string) *sysnum.Table {
	t.Helper()
	tab := map[string]*sysnum.Table{"amd64": sysnum.AMD64, "arm64": sysnum.ARM64}[arch]
	if tab == nil {
		t.Fatalf("no system call table for %s", arch)
	}
	if tab.Source != sysTableSource {
		t.Fatalf("internal/sysnum is generated from %s, the review covers %s: classify the new system calls (sysclass.go), raise the ceilings, then update sysTableSource", tab.Source, sysTableSource)
	}
	return tab
}

// allShapes returns the seccomp rules of every policy shape: network off,
// loopback with ports or any port, on; a Unix socket or none; forking or
// not; root or not; process-access in force or waived.
func allShapes(t *testing.T) [][]SeccompRule {
	t.Helper()
	nets := [][]profile.Option{
		nil,
		{profile.UnixSocket("/run/x.sock")},
		{profile.Network(profile.NetworkLoopback, 80)},
		{profile.Network(profile.NetworkLoopback, profile.AnyPort)},
		{profile.Network(profile.NetworkOn)},
		{profile.Network(profile.NetworkOn, profile.AnyPort), profile.ListenAnyInterface(), profile.UnixSocket("/run/x.sock")},
	}
	var out [][]SeccompRule
	for _, n := range nets {
		for _, fork := range []bool{false, true} {
			for _, waive := range []bool{false, true} {
				for _, root := range []bool{false, true} {
					opts := slices.Clone(n)
					if fork {
						opts = append(opts, profile.Fork())
					}
					if waive {
						opts = append(opts, profile.Waive(profile.ProcessAccess))
					}
					pol, err := profile.New(profile.BaseV1, opts...)
					if err != nil {
						t.Fatal(err)
					}
					pl, err := Lower(pol, Env{Root: root, Accept: profile.Gaps()})
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, pl.Seccomp)
				}
			}
		}
	}
	return out
}

// TestSyscallReview: every system call of x/sys's amd64 and arm64 tables
// (the version go.mod requires) is classified exactly once; each arch's
// ceiling is its table's highest number, so anything newer answers ENOSYS;
// the rules name only calls both tables have, but a known few; and the
// classes match the rules: a denied call is refused unconditionally in
// every policy shape, a conditional one by some rule, an allowed one by
// none. Bumping x/sys with a new system call fails here until it is reviewed.
func TestSyscallReview(t *testing.T) {
	class := map[string]sysClass{}
	for _, g := range syscallReview {
		for _, n := range strings.Fields(g.names) {
			if c, ok := class[n]; ok {
				t.Errorf("%s is classified twice (%s, %s)", n, c, g.class)
			}
			class[n] = g.class
		}
	}
	known := map[string]bool{}
	for _, arch := range []*Arch{ArchAMD64, ArchARM64} {
		tab := xsysTable(t, arch.Name)
		for name, nr := range tab.Nums {
			known[name] = true
			if class[name] == 0 {
				t.Errorf("%s: %s (%d) is not classified: review it in sysclass.go", arch.Name, name, nr)
			}
			if got, ok := arch.Syscall(name); !ok || got != nr {
				t.Errorf("%s: Syscall(%q) = %d, %v; x/sys: %d", arch.Name, name, got, ok, nr)
			}
		}
		if arch.ceiling != tab.Limit-1 {
			t.Errorf("%s: ceiling %d, x/sys's highest number %d", arch.Name, arch.ceiling, tab.Limit-1)
		}
	}
	for name := range class {
		if !known[name] {
			t.Errorf("%s is classified but in neither x/sys table", name)
		}
	}
	shapes := allShapes(t)
	ruled := map[string]bool{}
	for _, rules := range shapes {
		for _, r := range rules {
			ruled[r.Syscall] = true
			if c := class[r.Syscall]; c != sysDenied && c != sysConditional {
				t.Errorf("a rule names %s, classified %v", r.Syscall, c)
			}
		}
	}
	// Filter skips a rule whose call the arch lacks, so a rule may name
	// only calls of both tables but these (absent from asm-generic's
	// unistd.h, which arm64 uses).
	absent := map[string]string{"amd64": "", "arm64": "chmod chown creat fork ioperm iopl lchown mknod open uselib vfork"}
	for _, arch := range []*Arch{ArchAMD64, ArchARM64} {
		var got []string
		for name := range ruled {
			if _, ok := arch.Syscall(name); !ok {
				got = append(got, name)
			}
		}
		slices.Sort(got)
		if want := strings.Fields(absent[arch.Name]); !slices.Equal(got, want) {
			t.Errorf("%s: rules name calls the arch lacks %q, want %q", arch.Name, got, want)
		}
	}
	for name, c := range class {
		switch c {
		case sysAllowed:
			continue
		case sysConditional:
			if !ruled[name] {
				t.Errorf("%s is conditional but no policy shape has a rule for it", name)
			}
		case sysDenied:
			for i, rules := range shapes {
				if !slices.ContainsFunc(rules, func(r SeccompRule) bool { return r.Syscall == name && len(r.Conds) == 0 }) {
					t.Errorf("%s is denied but shape %d refuses it only conditionally or not at all", name, i)
					break
				}
			}
		}
	}
}
