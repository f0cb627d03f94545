package cage_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile/seatbelt"
)

func openPTY(t *testing.T) (master, slave *os.File) { return testenv.OpenPTY(t) }

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
	rw := seatbelt.ExtensionReadWrite
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
