package cage_test

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// openPTY opens a pseudo-terminal pair through /dev/ptmx.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// A spawn grants exactly the terminals its stdio is open on, once each,
// read-write; pipes, buffers and regular files name none.
func TestTerminalGrants(t *testing.T) {
	_, slave := openPTY(t)
	_, other := openPTY(t)
	file, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var nilFile *os.File
	rw := profile.ExtensionReadWrite
	cases := []struct {
		name  string
		stdio []any
		want  [][2]string
	}{
		{"none", []any{nil, &bytes.Buffer{}, file}, nil},
		{"nil file", []any{nilFile, nil, nil}, nil},
		{"stdin", []any{slave, &bytes.Buffer{}, nil}, [][2]string{{slave.Name(), rw}}},
		{"same terminal thrice", []any{slave, slave, slave}, [][2]string{{slave.Name(), rw}}},
		{"two terminals", []any{slave, file, other}, [][2]string{{slave.Name(), rw}, {other.Name(), rw}}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, cage.TerminalGrants(tc.stdio...)); diff != "" {
			t.Errorf("%s: grants (-want +got):\n%s", tc.name, diff)
		}
	}
}
