// Package golden compares test output with files under a package's
// testdata directory, or rewrites them when the test runs with -update:
//
//	func TestPlan(t *testing.T) {
//		golden.Check(t, "plan.txt", plan.String()) // testdata/plan.txt
//	}
//
// Rewrite with go test ./PKG -update and read the diff: every line of it is
// a change in what the golden files pin.
//
// # Limitations
//
// Files are compared as text; -update writes them 0644 and creates their
// directories.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ instead of comparing")

// Check compares got with testdata/name (a slash-separated path), or
// rewrites that file with -update.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", filepath.FromSlash(name))
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test with -update in this package to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got); if the change is intended, run go test with -update in this package:\n%s", path, diff)
	}
}
