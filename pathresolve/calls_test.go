package pathresolve_test

import (
	"fmt"
	"sync"
	"testing"
)

// Resolving many paths that share prefixes asks each distinct component
// once, also when resolutions run concurrently.
func TestCallsPerComponent(t *testing.T) {
	fsys, r := newMac(t)
	var paths []string
	for d := 0; d < 20; d++ {
		for f := 0; f < 100; f++ {
			p := fmt.Sprintf("/private/tmp/proj/d%02d/f%03d", d, f)
			if f%2 == 0 { // half exist, half are names created later
				must(t, fsys.WriteFile(p, nil))
			}
			paths = append(paths, fmt.Sprintf("/tmp/proj/d%02d/f%03d", d, f))
		}
	}
	fsys.ResetCalls()
	var wg sync.WaitGroup
	errs := make(chan error, len(paths))
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(paths); i += 8 {
				res, err := r.Resolve(paths[i])
				if err != nil {
					errs <- err
					return
				}
				if want := "/private" + paths[i]; res.Path != want {
					errs <- fmt.Errorf("Resolve(%q) = %q, want %q", paths[i], res.Path, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	lstat := fsys.Calls("Lstat")
	for name, n := range lstat {
		if n > 1 {
			t.Errorf("Lstat(%q) called %d times, want at most once", name, n)
		}
	}
	// /tmp, /private, /private/tmp, /private/tmp/proj, 20 dirs, 2000 names.
	if want := 4 + 20 + 2000; len(lstat) != want {
		t.Errorf("Lstat asked about %d names, want %d", len(lstat), want)
	}
	if rl := fsys.Calls("Readlink"); len(rl) != 1 || rl["/tmp"] != 1 {
		t.Errorf("Readlink calls = %v, want /tmp once", rl)
	}
	// Files share their directory's answer: 20 dirs.
	cs := fsys.Calls("CaseSensitive")
	for name, n := range cs {
		if n > 1 {
			t.Errorf("CaseSensitive(%q) called %d times, want at most once", name, n)
		}
	}
	if len(cs) > 20 {
		t.Errorf("CaseSensitive asked about %d names, want at most 20 (one per directory)", len(cs))
	}
}
