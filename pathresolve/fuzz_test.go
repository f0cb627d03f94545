package pathresolve_test

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/pathresolve/macfs"
)

func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"/", "/tmp/x", "/var/folders/xx/yyyy/T/a", "/etc/hosts", "/etc/hosts/x",
		"/System/Volumes/Data/Users/me", "/system/volumes/data/private/tmp",
		"/Users/me/proj/a.txt", "/Users/me/loopA", "/Users/me/skip/x", "/Users/me/dangling/y",
		"/Users/me/Documents/up/z", "/Volumes/CS/src", "/Users/me/cs/x",
		macfs.NFC("/Users/me/café.txt"), "/Users/me/Private/key",
		"", "rel", "//", "/a/../b", "/a/./b", "/a/", "/a\x00b", "/\xff\xfe",
	} {
		f.Add(s)
	}
	fsys, r := macTree(f)
	must(f, fsys.WriteFile("/Users/me/Private/key", nil))
	must(f, fsys.Deny("/Users/me/Private"))
	f.Fuzz(func(t *testing.T, p string) {
		res, err := r.Resolve(p)
		if cerr := pathresolve.CheckAbs(p); cerr != nil {
			if err == nil || err.Error() != cerr.Error() {
				t.Fatalf("Resolve(%q) = %v, want CheckAbs's error %v", p, err, cerr)
			}
			return
		}
		if err != nil {
			var pe *pathresolve.PathError
			if !errors.As(err, &pe) || pe.Path != p {
				t.Fatalf("Resolve(%q) error %v is not a *PathError naming the input", p, err)
			}
			if !errors.Is(err, pathresolve.ErrLoop) && !errors.Is(err, syscall.ENOTDIR) && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Resolve(%q) unexpected error %v", p, err)
			}
			return
		}
		if res.Input != p {
			t.Fatalf("Resolve(%q).Input = %q", p, res.Input)
		}
		checkResult(t, r, res)
	})
}
