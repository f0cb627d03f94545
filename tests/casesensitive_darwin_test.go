package tests

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
)

// These tests need a case-sensitive APFS volume, named by
// PROCAGE_CASE_SENSITIVE_VOLUME (the macOS lane attaches one with hdiutil,
// no root needed); without it they skip, and fail under
// PROCAGE_STRICT_SKIP.

// TestCaseSensitiveRefusals: an allow on a case-sensitive volume would
// allow the name's case variants, which are other files there, so New
// refuses an allow rule or an allowed Unix socket there and Start a grant.
func TestCaseSensitiveRefusals(t *testing.T) {
	requireCage(t)
	dir := testenv.CaseSensitiveVolume(t)
	res, err := pathresolve.OS().CaseSensitive(dir)
	if err != nil || !res {
		t.Fatalf("pathconf(_PC_CASE_SENSITIVE) of %s = %v, %v; want true", dir, res, err)
	}
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tt := range []struct {
		name string
		opt  profile.Option
	}{
		{"read", profile.Read(dir)},
		{"read-write", profile.ReadWrite(filepath.Join(dir, "sub"))},
		{"unix socket", profile.UnixSocket(sock)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cage.New(policy(t, tt.opt), cage.WithHome(tempHome(t)))
			wantCaseSensitive(t, "New", err, dir)
		})
	}
	t.Run("grant", func(t *testing.T) {
		c := newCage(t, policy(t), cage.WithHome(tempHome(t)))
		cmd := c.Command(t.Context(), "/usr/bin/true")
		cmd.Grants = []cage.Grant{{Path: dir}}
		wantCaseSensitive(t, "Run with a grant", cmd.Run(), dir)
	})
	t.Run("deny only", func(t *testing.T) {
		pol := policy(t, profile.Seatbelt(fmt.Sprintf(`(deny file-read* (literal %q))`, filepath.Join(dir, "x"))))
		if _, err := cage.New(pol, cage.WithHome(tempHome(t))); err != nil {
			t.Errorf("New with only a deny on the case-sensitive volume: %v", err)
		}
	})
}

func wantCaseSensitive(t *testing.T, what string, err error, dir string) {
	t.Helper()
	var cse *pathresolve.CaseSensitiveError
	pe, ok := errors.AsType[*cage.PolicyError](err)
	if !ok || pe.Kind != cage.ErrCaseSensitive || !errors.As(err, &cse) {
		t.Fatalf("%s: %v, want a *cage.PolicyError of kind ErrCaseSensitive", what, err)
	}
	if cse.Volume == "" || !strings.HasPrefix(cse.Path+"/", dir+"/") {
		t.Errorf("%s: CaseSensitiveError{Path: %q, Volume: %q}, want a path under %s", what, cse.Path, cse.Volume, dir)
	}
}

// TestCaseSensitiveVariantDenies: Seatbelt matches paths case-insensitively
// on every volume (the property procage's refusals rest on), so on a
// case-sensitive volume a deny of Secret.txt also denies secret.txt and
// SECRET.TXT, which are other files there. The allow is on the volume's
// parent directory, which is on a case-insensitive volume.
func TestCaseSensitiveVariantDenies(t *testing.T) {
	requireCage(t)
	dir := testenv.CaseSensitiveVolume(t)
	names := []string{"Secret.txt", "secret.txt", "SECRET.TXT", "other.txt"}
	for _, n := range names {
		writeFile(t, filepath.Join(dir, n), n)
	}
	parent := filepath.Dir(dir)
	for parent != "/" {
		if cs, err := pathresolve.OS().CaseSensitive(parent); err == nil && !cs {
			break
		}
		parent = filepath.Dir(parent)
	}
	if parent == "/" {
		t.Fatalf("no case-insensitive directory above %s to allow", dir)
	}
	c := newCage(t, policy(t, profile.Read(parent),
		profile.Seatbelt(fmt.Sprintf(`(deny file-read* (literal %q))`, filepath.Join(dir, "Secret.txt")))),
		cage.WithHome(tempHome(t)))
	// The control: the allow reaches the volume.
	o, e, err := run(t, c, "/bin/cat", filepath.Join(dir, "other.txt"))
	if err != nil || o != "other.txt" {
		t.Fatalf("reading an allowed file on the case-sensitive volume: %q, %v (%s)", o, err, e)
	}
	for _, n := range names[:3] {
		if got, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(got) != n {
			t.Fatalf("%s is not its own file outside the cage: %q, %v", n, got, err)
		}
		o, e, err := run(t, c, "/bin/cat", filepath.Join(dir, n))
		mustRefuse(t, "reading "+n+" on the case-sensitive volume", o, e, err)
	}
}
