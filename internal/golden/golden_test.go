package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeT records failures instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) Fatal(...any)          { f.failed = true }

func TestCheck(t *testing.T) {
	t.Chdir(t.TempDir())
	*update = true
	Check(t, "d/x.txt", "one\n")
	*update = false
	if b, err := os.ReadFile(filepath.Join("testdata", "d", "x.txt")); err != nil || string(b) != "one\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}
	for _, tc := range []struct {
		name, got string
		fail      bool
	}{
		{"d/x.txt", "one\n", false},
		{"d/x.txt", "two\n", true},
		{"missing.txt", "", true},
	} {
		f := &fakeT{TB: t}
		Check(f, tc.name, tc.got)
		if f.failed != tc.fail {
			t.Errorf("Check(%s, %q) failed = %v, want %v", tc.name, tc.got, f.failed, tc.fail)
		}
	}
}
