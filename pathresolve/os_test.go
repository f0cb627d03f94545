package pathresolve_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/procage-go/procage/pathresolve"
)

// Real symbolic links in a temporary directory, through OS().
func TestOSResolve(t *testing.T) {
	base := t.TempDir()
	kbase, err := filepath.EvalSymlinks(base) // the temp dir may itself sit behind links
	must(t, err)
	must(t, os.MkdirAll(filepath.Join(base, "real", "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(base, "real", "sub", "f"), nil, 0o644))
	must(t, os.Symlink(filepath.Join(kbase, "real"), filepath.Join(base, "abs")))
	must(t, os.Symlink("real/sub", filepath.Join(base, "rel")))
	must(t, os.Symlink("c2", filepath.Join(base, "c1")))
	must(t, os.Symlink("rel", filepath.Join(base, "c2")))
	must(t, os.Symlink("../real/sub/f", filepath.Join(base, "real", "up")))
	must(t, os.Symlink("l2", filepath.Join(base, "l1")))
	must(t, os.Symlink("l1", filepath.Join(base, "l2")))
	must(t, os.Symlink("missing/x", filepath.Join(base, "dang")))

	r := pathresolve.New(pathresolve.OS())
	for _, name := range []string{"abs/sub/f", "rel/f", "c1/f", "real/up", "real/sub"} {
		in := filepath.Join(base, name)
		res, err := r.Resolve(in)
		if err != nil {
			t.Errorf("Resolve(%q): %v", in, err)
			continue
		}
		want, err := filepath.EvalSymlinks(in)
		must(t, err)
		if res.Path != want || !res.Exists || res.Volume != want {
			t.Errorf("Resolve(%q) = {Path %q, Exists %v, Volume %q}, want Path and Volume %q (EvalSymlinks)", in, res.Path, res.Exists, res.Volume, want)
		}
		checkResult(t, r, res)
	}

	res, err := r.Resolve(filepath.Join(base, "c1", "new"))
	must(t, err)
	wantLinks := []string{filepath.Join(kbase, "c1"), filepath.Join(kbase, "c2"), filepath.Join(kbase, "rel")}
	if diff := cmp.Diff(wantLinks, res.Links[len(res.Links)-3:]); diff != "" {
		t.Errorf("Links of c1/new, in kernel spelling (-want +got):\n%s", diff)
	}
	if want := filepath.Join(kbase, "real", "sub", "new"); res.Path != want || res.Exists {
		t.Errorf("Resolve(c1/new) = %q (exists %v), want %q, missing", res.Path, res.Exists, want)
	}

	res, err = r.Resolve(filepath.Join(base, "dang"))
	must(t, err)
	if want := filepath.Join(kbase, "missing", "x"); res.Path != want || res.Volume != kbase {
		t.Errorf("dangling link: Path %q Volume %q, want %q under %q", res.Path, res.Volume, want, kbase)
	}

	if _, err := r.Resolve(filepath.Join(base, "l1", "x")); !errors.Is(err, pathresolve.ErrLoop) {
		t.Errorf("link cycle: %v, want ErrLoop", err)
	}
	if _, err := r.Resolve(filepath.Join(base, "real", "sub", "f", "x")); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("through a file: %v, want ENOTDIR", err)
	}

	// pathconf and the host agree: on darwin compare with creating a file
	// and looking it up in another case; elsewhere OS() says sensitive.
	cs, err := pathresolve.OS().CaseSensitive(kbase)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(base, "probe"), nil, 0o644))
	_, statErr := os.Lstat(filepath.Join(base, "PROBE"))
	if runtime.GOOS == "darwin" {
		if want := statErr != nil; cs != want {
			t.Errorf("CaseSensitive(%q) = %v, but looking up another case gave %v", kbase, cs, statErr)
		}
	} else if !cs {
		t.Errorf("CaseSensitive(%q) = false on %s, want true", kbase, runtime.GOOS)
	}
}

func TestOSPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions; covered by the simulated FS in TestResolveErrors")
	}
	base := t.TempDir()
	locked := filepath.Join(base, "locked")
	must(t, os.MkdirAll(filepath.Join(locked, "in"), 0o755))
	must(t, os.Chmod(locked, 0))
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	_, err := pathresolve.New(pathresolve.OS()).Resolve(filepath.Join(locked, "in"))
	var pe *pathresolve.PathError
	if !errors.Is(err, os.ErrPermission) || !errors.As(err, &pe) {
		t.Fatalf("Resolve through a mode-0 directory = %v, want a *PathError with fs.ErrPermission", err)
	}
}

// A link target with a trailing slash names a directory: the kernel fails
// "file/" with ENOTDIR, and the resolver must not turn it into the file.
// The expectation is taken from the host kernel, not hard-coded.
func TestOSTrailingSlashTarget(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	must(t, os.WriteFile(filepath.Join(base, "f"), nil, 0o644))
	must(t, os.Mkdir(filepath.Join(base, "d"), 0o755))
	must(t, os.Symlink("f/", filepath.Join(base, "tofile")))
	must(t, os.Symlink("d/", filepath.Join(base, "todir")))
	must(t, os.Symlink("missing/", filepath.Join(base, "tomissing")))

	r := pathresolve.New(pathresolve.OS())
	in := filepath.Join(base, "tofile")
	if _, kerr := os.Stat(in); !errors.Is(kerr, syscall.ENOTDIR) {
		t.Fatalf("host: stat(%q) = %v, want ENOTDIR", in, kerr)
	}
	if res, err := r.Resolve(in); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Resolve(%q) = %q, %v; want ENOTDIR like the kernel", in, res.Path, err)
	}
	for name, want := range map[string]string{"todir": "d", "tomissing": "missing"} {
		res, err := r.Resolve(filepath.Join(base, name))
		if err != nil || res.Path != filepath.Join(base, want) {
			t.Errorf("Resolve(%s) = %q, %v; want %q", name, res.Path, err, filepath.Join(base, want))
		}
	}
}
