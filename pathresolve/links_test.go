package pathresolve_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/pathresolve"
)

// A link planted by one run must not redirect a later policy path or
// grant (issue 12 item 3): proj/build/cache -> $HOME would turn a grant
// of the cache into a grant of the home directory.
func TestCheckLinks(t *testing.T) {
	const home = "/Users/me"
	fsys, r := newMac(t)
	must(t, fsys.MkdirAll(home+"/proj/build"))
	must(t, fsys.MkdirAll(home+"/proj/src/v2"))
	must(t, fsys.MkdirAll(home+"/Library/CloudStorage/Docs"))
	must(t, fsys.MkdirAll("/Volumes/ext/data"))
	must(t, fsys.Symlink(home, home+"/proj/build/cache"))             // to an ancestor
	must(t, fsys.Symlink("../../.ssh", home+"/proj/build/keys"))      // out of the tree, relative
	must(t, fsys.Symlink("v2", home+"/proj/src/current"))             // within the tree
	must(t, fsys.Symlink("/Volumes/ext/data", home+"/proj/data"))     // out of the tree
	must(t, fsys.Symlink("Library/CloudStorage/Docs", home+"/Notes")) // a redirected folder
	must(t, fsys.Symlink(".", home+"/proj/self"))                     // to itself

	writable := []pathresolve.Tree{{Path: home + "/proj", Writable: true}}
	readable := []pathresolve.Tree{{Path: home + "/proj"}}
	cases := []struct {
		name  string
		path  string
		trees []pathresolve.Tree
		write bool
		want  *pathresolve.LinkError // nil: accepted
	}{
		{"cache to home, tree writable", home + "/proj/build/cache", writable, false,
			&pathresolve.LinkError{Path: home + "/proj/build/cache", Link: home + "/proj/build/cache", Resolved: home}},
		{"cache to home, no tree", home + "/proj/build/cache", nil, false,
			&pathresolve.LinkError{Path: home + "/proj/build/cache", Link: home + "/proj/build/cache", Resolved: home}},
		{"below the cache link", home + "/proj/build/cache/.aws", nil, false,
			&pathresolve.LinkError{Path: home + "/proj/build/cache/.aws", Link: home + "/proj/build/cache", Resolved: home + "/.aws"}},
		{"out of a writable tree", home + "/proj/build/keys", writable, false,
			&pathresolve.LinkError{Path: home + "/proj/build/keys", Link: home + "/proj/build/keys", Resolved: home + "/.ssh", Tree: home + "/proj", Writable: true}},
		{"out of a readable tree", home + "/proj/data", readable, false,
			&pathresolve.LinkError{Path: home + "/proj/data", Link: home + "/proj/data", Resolved: "/Volumes/ext/data", Tree: home + "/proj"}},
		{"case variant of the tree", home + "/PROJ/data", writable, false,
			&pathresolve.LinkError{Path: home + "/PROJ/data", Link: home + "/PROJ/data", Resolved: "/Volumes/ext/data", Tree: home + "/proj", Writable: true}},
		{"to itself", home + "/proj/self", nil, false,
			&pathresolve.LinkError{Path: home + "/proj/self", Link: home + "/proj/self", Resolved: home + "/proj"}},
		{"within the tree", home + "/proj/src/current", writable, false, nil},
		{"write within a writable tree", home + "/proj/src/current", writable, true, nil},
		{"read within a readable tree", home + "/proj/src/current", readable, false, nil},
		{"write within a readable tree", home + "/proj/src/current", readable, true,
			&pathresolve.LinkError{Path: home + "/proj/src/current", Link: home + "/proj/src/current", Resolved: home + "/proj/src/v2", Tree: home + "/proj"}},
		{"out of the tree, link outside every tree", home + "/proj/data", nil, false, nil},
		{"redirected folder", home + "/Notes", []pathresolve.Tree{{Path: home + "/proj", Writable: true}}, false, nil},
		{"the root links", "/tmp/x", []pathresolve.Tree{{Path: "/private/tmp", Writable: true}}, false, nil},
		{"no link", home + "/proj/build", writable, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Resolve(tc.path)
			must(t, err)
			err = pathresolve.CheckLinks(res, tc.write, tc.trees, nil)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckLinks(%s) = %v, want nil", tc.path, err)
				}
				return
			}
			var le *pathresolve.LinkError
			if !errors.As(err, &le) || !errors.Is(err, pathresolve.ErrSuspectLink) {
				t.Fatalf("CheckLinks(%s) = %v, want a *LinkError", tc.path, err)
			}
			if diff := cmp.Diff(tc.want, le); diff != "" {
				t.Errorf("CheckLinks(%s) (-want +got):\n%s", tc.path, diff)
			}
			// The caller may accept the link by name.
			if err := pathresolve.CheckLinks(res, tc.write, tc.trees, func(l string) bool { return l == le.Link }); err != nil {
				t.Errorf("CheckLinks(%s) with %s accepted = %v", tc.path, le.Link, err)
			}
		})
	}
}

// Red team of issue 12: the tree and the link may be spelled in another
// Unicode normalization or case (a path typed in NFC, another listed from
// disk in NFD, a Kelvin sign for k); Seatbelt and APFS take them for the
// same directory, so the link is inside the tree and must be refused.
func TestCheckLinksSpelling(t *testing.T) {
	const home = "/Users/me"
	fsys, r := newMac(t)
	nfc, nfd := home+"/caf\u00e9", home+"/cafe\u0301"
	must(t, fsys.MkdirAll(nfd+"/build"))
	must(t, fsys.MkdirAll(home+"/work/build"))
	must(t, fsys.MkdirAll("/Volumes/ext/data"))
	must(t, fsys.Symlink("/Volumes/ext/data", nfd+"/build/keys"))
	must(t, fsys.Symlink("/Volumes/ext/data", home+"/work/build/keys"))
	cases := []struct{ tree, path string }{
		{nfc, nfd + "/build/keys"},
		{nfd, nfc + "/build/keys"},
		{home + "/CAF\u00c9", nfd + "/build/keys"},
		{home + "/work", home + "/wor\u212a/build/keys"},
		{home + "/wor\u212a", home + "/work/build/keys"},
	}
	for _, tc := range cases {
		tree, err := r.Resolve(tc.tree)
		must(t, err)
		res, err := r.Resolve(tc.path)
		must(t, err)
		err = pathresolve.CheckLinks(res, false, []pathresolve.Tree{{Path: tree.Path, Writable: true}}, nil)
		if !errors.Is(err, pathresolve.ErrSuspectLink) {
			t.Errorf("tree %+q, path %+q: CheckLinks = %v, want a *LinkError", tc.tree, tc.path, err)
		}
	}
}
