package linux

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/procage-go/procage/profile"
)

// xsysTable reads golang.org/x/sys/unix's system call table for arch
// (zsysnum_linux_<arch>.go) from the module go.mod requires, as text, so
// both architectures are checked on any host.
func xsysTable(t *testing.T, arch string) map[string]uint32 {
	t.Helper()
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*golang\.org/x/sys (v\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod requires no golang.org/x/sys")
	}
	if got := "golang.org/x/sys " + string(m[1]); got != sysTableSource {
		t.Fatalf("go.mod requires %s, the review covers %s: classify the new system calls (sysclass.go), raise the ceilings, then update sysTableSource", got, sysTableSource)
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "golang.org/x/sys").Output()
	if err != nil {
		t.Fatalf("go list -m golang.org/x/sys: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "unix", "zsysnum_linux_"+arch+".go"))
	if err != nil {
		t.Fatal(err)
	}
	tab := map[string]uint32{}
	for _, m := range regexp.MustCompile(`(?m)^\s*SYS_([A-Z0-9_]+)\s*=\s*(\d+)\s*$`).FindAllSubmatch(b, -1) {
		nr, err := strconv.ParseUint(string(m[2]), 10, 32)
		if err != nil {
			t.Fatal(err)
		}
		tab[strings.ToLower(string(m[1]))] = uint32(nr)
	}
	if len(tab) < 300 {
		t.Fatalf("x/sys %s table: only %d system calls parsed", arch, len(tab))
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
// the hand tables the rules use give x/sys's numbers; and the classes
// match the rules: a denied call is refused unconditionally in every
// policy shape, a conditional one by some rule, an allowed one by none.
// Bumping x/sys with a new system call fails here until it is reviewed.
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
		var top uint32
		for name, nr := range tab {
			known[name] = true
			top = max(top, nr)
			if class[name] == 0 {
				t.Errorf("%s: %s (%d) is not classified: review it in sysclass.go", arch.Name, name, nr)
			}
		}
		if arch.ceiling != top {
			t.Errorf("%s: ceiling %d, x/sys's highest number %d", arch.Name, arch.ceiling, top)
		}
		for name, nr := range arch.syscalls {
			if want, ok := tab[name]; !ok || want != nr {
				t.Errorf("%s: the hand table gives %s = %d; x/sys: %d, %v", arch.Name, name, nr, want, ok)
			}
		}
		// A rule naming a call the arch has but the hand table lacks would be
		// skipped silently by Filter.
		for name, c := range class {
			if _, ok := tab[name]; ok && c != sysAllowed {
				if _, ok := arch.syscalls[name]; !ok {
					t.Errorf("%s: %s is %s but not in the hand table: its rules would be skipped", arch.Name, name, c)
				}
			}
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
