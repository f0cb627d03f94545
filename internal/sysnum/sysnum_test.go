package sysnum

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGenerated checks that zsysnum.go is what the generator makes from
// the x/sys version go.mod requires.
func TestGenerated(t *testing.T) {
	want, err := exec.Command("go", "run", "./gen", "-o", "-").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go run ./gen: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go run ./gen: %v", err)
	}
	got, err := os.ReadFile("zsysnum.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("zsysnum.go is stale; run go generate ./internal/sysnum (-want +got):\n%s", cmp.Diff(string(want), string(got)))
	}
}

// TestTables checks the generated tables' shape and a few numbers each
// architecture's unistd.h fixes.
func TestTables(t *testing.T) {
	for _, tt := range []struct {
		tab  *Table
		arch string
		nums map[string]uint32
		none []string
	}{
		{AMD64, "amd64", map[string]uint32{"read": 0, "ioctl": 16, "clone": 56, "fork": 57, "openat": 257, "umount2": 166, "prlimit64": 302, "io_uring_setup": 425, "clone3": 435}, []string{"renameat2x", "sys_read"}},
		{ARM64, "arm64", map[string]uint32{"io_setup": 0, "ioctl": 29, "openat": 56, "clone": 220, "umount2": 39, "prlimit64": 261, "io_uring_setup": 425, "clone3": 435}, []string{"fork", "vfork", "open", "iopl"}},
	} {
		if tt.tab.Arch != tt.arch || tt.tab.Source == "" {
			t.Errorf("%s: Arch %q, Source %q", tt.arch, tt.tab.Arch, tt.tab.Source)
		}
		if len(tt.tab.Nums) < 300 {
			t.Errorf("%s: only %d system calls", tt.arch, len(tt.tab.Nums))
		}
		var top uint32
		for _, nr := range tt.tab.Nums {
			top = max(top, nr)
		}
		if tt.tab.Limit != top+1 {
			t.Errorf("%s: Limit %d, highest number %d", tt.arch, tt.tab.Limit, top)
		}
		for name, want := range tt.nums {
			if got, ok := tt.tab.Nums[name]; !ok || got != want {
				t.Errorf("%s: %s = %d, %v; want %d", tt.arch, name, got, ok, want)
			}
		}
		for _, name := range tt.none {
			if nr, ok := tt.tab.Nums[name]; ok {
				t.Errorf("%s: has %s (%d)", tt.arch, name, nr)
			}
		}
	}
}
