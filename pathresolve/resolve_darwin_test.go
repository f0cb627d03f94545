package pathresolve_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/pathresolve"
)

func hostResolver(t *testing.T) *pathresolve.Resolver {
	t.Helper()
	r, err := pathresolve.NewHost()
	if err != nil {
		t.Fatalf("NewHost: %v", err)
	}
	return r
}

func TestDarwinTmp(t *testing.T) {
	res, err := hostResolver(t).Resolve("/tmp/procage-pathresolve-missing")
	must(t, err)
	want := pathresolve.Result{
		Input: "/tmp/procage-pathresolve-missing",
		Path:  "/private/tmp/procage-pathresolve-missing",
		Rewrites: []pathresolve.Rewrite{{
			From: "/tmp/procage-pathresolve-missing", To: "/private/tmp/procage-pathresolve-missing",
			Reason: pathresolve.ReasonSymlink, Via: "/tmp",
		}},
		Links:         []string{"/tmp"},
		CaseSensitive: res.CaseSensitive, // checked against pathconf in TestDarwinPathconf
		Volume:        "/private/tmp",
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Resolve(/tmp/...) (-want +got):\n%s", diff)
	}
}

func TestDarwinTempDir(t *testing.T) {
	dir := os.TempDir()
	if !strings.HasPrefix(dir, "/var/folders/") {
		// Not a Seatbelt test: an overridden $TMPDIR only removes the subject.
		testenv.Skip(t, testenv.ReasonTempDirOverridden, fmt.Sprintf("$TMPDIR is %q, not macOS's per-user /var/folders directory", dir))
	}
	res, err := hostResolver(t).Resolve(filepath.Clean(dir))
	must(t, err)
	want, err := filepath.EvalSymlinks(dir)
	must(t, err)
	if res.Path != want || !strings.HasPrefix(res.Path, "/private/var/folders/") || !slices.Contains(res.Links, "/var") {
		t.Errorf("Resolve(%q) = %q, links %v; want %q (EvalSymlinks) under /private/var/folders, through /var", dir, res.Path, res.Links, want)
	}
	checkResult(t, hostResolver(t), res)
}

func TestDarwinFirmlinks(t *testing.T) {
	fl, err := pathresolve.HostFirmlinks()
	must(t, err)
	i := slices.IndexFunc(fl, func(f pathresolve.Firmlink) bool { return f.System == "/Users" })
	if i < 0 {
		t.Fatalf("HostFirmlinks() = %v, want an entry for /Users", fl)
	}
	if fl[i].Data != "/System/Volumes/Data/Users" {
		t.Errorf("/Users firmlink data side = %q, want /System/Volumes/Data/Users", fl[i].Data)
	}
	res, err := hostResolver(t).Resolve("/System/Volumes/Data/Users")
	must(t, err)
	if res.Path != "/Users" || len(res.Rewrites) != 1 || res.Rewrites[0].Reason != pathresolve.ReasonFirmlink {
		t.Errorf("Resolve(/System/Volumes/Data/Users) = %q, %+v; want /Users by one firmlink rewrite", res.Path, res.Rewrites)
	}
}

// pathconf(_PC_CASE_SENSITIVE) on / answers and agrees with an experiment on
// the data volume, which is in the same APFS volume group as / and so has the
// same case sensitivity.
func TestDarwinPathconf(t *testing.T) {
	root, err := pathresolve.OS().CaseSensitive("/")
	must(t, err)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "probe"), nil, 0o644))
	_, statErr := os.Lstat(filepath.Join(dir, "PROBE"))
	if want := statErr != nil; root != want {
		t.Errorf("CaseSensitive(/) = %v, but looking up another case in %s gave %v", root, dir, statErr)
	}
	data, err := pathresolve.OS().CaseSensitive("/System/Volumes/Data")
	must(t, err)
	if data != root {
		t.Errorf("CaseSensitive(/System/Volumes/Data) = %v, CaseSensitive(/) = %v; want equal", data, root)
	}
}
