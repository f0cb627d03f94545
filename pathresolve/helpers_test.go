package pathresolve_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/pathresolve/macfs"
)

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// newMac returns the simulated macOS tree and a resolver that knows its
// firmlinks.
func newMac(tb testing.TB, opts ...pathresolve.Option) (*macfs.FS, *pathresolve.Resolver) {
	tb.Helper()
	fsys := macfs.NewMacOS()
	opts = append([]pathresolve.Option{pathresolve.WithFirmlinks(fsys.Firmlinks())}, opts...)
	return fsys, pathresolve.New(fsys, opts...)
}

// isUnder reports whether p is dir or inside it.
func isUnder(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// checkResult asserts the properties every successful Result has, and that
// resolving its Path again changes nothing.
func checkResult(tb testing.TB, r *pathresolve.Resolver, res pathresolve.Result) {
	tb.Helper()
	if err := pathresolve.CheckAbs(res.Path); err != nil {
		tb.Errorf("Resolve(%q).Path %q is not absolute and normalised: %v", res.Input, res.Path, err)
	}
	if err := pathresolve.CheckAbs(res.Volume); err != nil || !isUnder(res.Path, res.Volume) {
		tb.Errorf("Resolve(%q).Volume %q is not a normalised prefix of Path %q (%v)", res.Input, res.Volume, res.Path, err)
	}
	if res.Exists != (res.Volume == res.Path) {
		tb.Errorf("Resolve(%q): Exists %v but Volume %q, Path %q", res.Input, res.Exists, res.Volume, res.Path)
	}
	for _, l := range res.Links {
		if err := pathresolve.CheckAbs(l); err != nil {
			tb.Errorf("Resolve(%q).Links has %q: %v", res.Input, l, err)
		}
	}
	if len(res.Rewrites) == 0 {
		if res.Path != res.Input {
			tb.Errorf("Resolve(%q).Path = %q without a rewrite", res.Input, res.Path)
		}
	} else {
		if got := res.Rewrites[0].From; got != res.Input {
			tb.Errorf("Resolve(%q): first rewrite from %q, want the input", res.Input, got)
		}
		for i := 1; i < len(res.Rewrites); i++ {
			if res.Rewrites[i].From != res.Rewrites[i-1].To {
				tb.Errorf("Resolve(%q): rewrites do not chain: %+v", res.Input, res.Rewrites)
			}
		}
		if got := res.Rewrites[len(res.Rewrites)-1].To; got != res.Path {
			tb.Errorf("Resolve(%q): last rewrite to %q, want Path %q", res.Input, got, res.Path)
		}
	}
	again, err := r.Resolve(res.Path)
	if err != nil {
		tb.Errorf("Resolve(%q) (a resolved path): %v", res.Path, err)
		return
	}
	want := res
	want.Input, want.Rewrites, want.Links = res.Path, nil, nil
	if diff := cmp.Diff(want, again); diff != "" {
		tb.Errorf("resolving the resolved path %q changed it (-want +got):\n%s", res.Path, diff)
	}
}
