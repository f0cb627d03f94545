package pathresolve_test

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/pathresolve/macfs"
)

const (
	sym  = pathresolve.ReasonSymlink
	firm = pathresolve.ReasonFirmlink
)

func rw(from, to string, reason pathresolve.Reason, via string) pathresolve.Rewrite {
	return pathresolve.Rewrite{From: from, To: to, Reason: reason, Via: via}
}

// macTree is the simulated macOS tree plus the links and volumes the table
// tests need.
func macTree(tb testing.TB) (*macfs.FS, *pathresolve.Resolver) {
	tb.Helper()
	fsys, r := newMac(tb)
	must(tb, fsys.MkdirAll("/private/tmp/work"))
	must(tb, fsys.WriteFile("/private/tmp/work/a.txt", nil))
	must(tb, fsys.Symlink("/tmp/work", "/Users/me/proj"))                     // absolute, through /tmp
	must(tb, fsys.Symlink("Documents", "/Users/me/docs"))                     // relative
	must(tb, fsys.Symlink("../.zshrc", "/Users/me/Documents/up"))             // relative with ..
	must(tb, fsys.Symlink("l2", "/Users/me/l1"))                              // links to links
	must(tb, fsys.Symlink("l3", "/Users/me/l2"))                              //
	must(tb, fsys.Symlink("Documents", "/Users/me/l3"))                       //
	must(tb, fsys.Symlink("/tmp", "/Users/me/tmplink"))                       // a link made to a link
	must(tb, fsys.Symlink("/nowhere/x", "/Users/me/dangling"))                // target missing
	must(tb, fsys.Symlink("loopB", "/Users/me/loopA"))                        // cycle
	must(tb, fsys.Symlink("loopA", "/Users/me/loopB"))                        //
	must(tb, fsys.Symlink("self", "/Users/me/self"))                          // self cycle
	must(tb, fsys.Symlink("gone/../Documents", "/Users/me/skip"))             // .. over a missing name
	must(tb, fsys.Symlink("/System/Volumes/Data/Users/me", "/Users/me/data")) // link into the data volume
	must(tb, fsys.MountCaseSensitive("/Volumes/CS"))
	must(tb, fsys.WriteFile("/Volumes/CS/Src/main.go", nil))
	must(tb, fsys.Symlink("/Volumes/CS/Src", "/Users/me/cs"))
	must(tb, fsys.WriteFile(macfs.NFD("/Users/me/café.txt"), nil))
	must(tb, fsys.WriteFile("/Users/me/naïve.txt", nil))
	return fsys, r
}

func TestResolve(t *testing.T) {
	_, r := macTree(t)
	tests := []struct {
		name, in string
		want     pathresolve.Result
	}{
		{
			name: "root",
			in:   "/",
			want: pathresolve.Result{Path: "/", Volume: "/", Exists: true},
		},
		{
			name: "tmp is private/tmp, missing name kept",
			in:   "/tmp/x",
			want: pathresolve.Result{
				Path:     "/private/tmp/x",
				Rewrites: []pathresolve.Rewrite{rw("/tmp/x", "/private/tmp/x", sym, "/tmp")},
				Links:    []string{"/tmp"},
				Volume:   "/private/tmp",
			},
		},
		{
			name: "etc file",
			in:   "/etc/hosts",
			want: pathresolve.Result{
				Path:     "/private/etc/hosts",
				Rewrites: []pathresolve.Rewrite{rw("/etc/hosts", "/private/etc/hosts", sym, "/etc")},
				Links:    []string{"/etc"},
				Volume:   "/private/etc/hosts", Exists: true,
			},
		},
		{
			name: "user temp dir under /var/folders",
			in:   macfs.TempDir,
			want: pathresolve.Result{
				Path:     macfs.KernelTempDir,
				Rewrites: []pathresolve.Rewrite{rw(macfs.TempDir, macfs.KernelTempDir, sym, "/var")},
				Links:    []string{"/var"},
				Volume:   macfs.KernelTempDir, Exists: true,
			},
		},
		{
			name: "file to be created in the user temp dir",
			in:   macfs.TempDir + "/build/out.log",
			want: pathresolve.Result{
				Path: macfs.KernelTempDir + "/build/out.log",
				Rewrites: []pathresolve.Rewrite{rw(macfs.TempDir+"/build/out.log",
					macfs.KernelTempDir+"/build/out.log", sym, "/var")},
				Links:  []string{"/var"},
				Volume: macfs.KernelTempDir,
			},
		},
		{
			// Spelling matrix: a rule through nested symbolic links covers the file.
			name: "nested links, absolute target through /tmp",
			in:   "/Users/me/proj/a.txt",
			want: pathresolve.Result{
				Path: "/private/tmp/work/a.txt",
				Rewrites: []pathresolve.Rewrite{
					rw("/Users/me/proj/a.txt", "/tmp/work/a.txt", sym, "/Users/me/proj"),
					rw("/tmp/work/a.txt", "/private/tmp/work/a.txt", sym, "/tmp"),
				},
				Links:  []string{"/Users/me/proj", "/tmp"},
				Volume: "/private/tmp/work/a.txt", Exists: true,
			},
		},
		{
			name: "relative link",
			in:   "/Users/me/docs/report.pdf",
			want: pathresolve.Result{
				Path:     "/Users/me/Documents/report.pdf",
				Rewrites: []pathresolve.Rewrite{rw("/Users/me/docs/report.pdf", "/Users/me/Documents/report.pdf", sym, "/Users/me/docs")},
				Links:    []string{"/Users/me/docs"},
				Volume:   "/Users/me/Documents",
			},
		},
		{
			name: "relative link with ..",
			in:   "/Users/me/Documents/up",
			want: pathresolve.Result{
				Path:     "/Users/me/.zshrc",
				Rewrites: []pathresolve.Rewrite{rw("/Users/me/Documents/up", "/Users/me/.zshrc", sym, "/Users/me/Documents/up")},
				Links:    []string{"/Users/me/Documents/up"},
				Volume:   "/Users/me/.zshrc", Exists: true,
			},
		},
		{
			name: "links to links",
			in:   "/Users/me/l1/f",
			want: pathresolve.Result{
				Path: "/Users/me/Documents/f",
				Rewrites: []pathresolve.Rewrite{
					rw("/Users/me/l1/f", "/Users/me/l2/f", sym, "/Users/me/l1"),
					rw("/Users/me/l2/f", "/Users/me/l3/f", sym, "/Users/me/l2"),
					rw("/Users/me/l3/f", "/Users/me/Documents/f", sym, "/Users/me/l3"),
				},
				Links:  []string{"/Users/me/l1", "/Users/me/l2", "/Users/me/l3"},
				Volume: "/Users/me/Documents",
			},
		},
		{
			name: "a link created pointing at a link",
			in:   "/Users/me/tmplink/x",
			want: pathresolve.Result{
				Path: "/private/tmp/x",
				Rewrites: []pathresolve.Rewrite{
					rw("/Users/me/tmplink/x", "/tmp/x", sym, "/Users/me/tmplink"),
					rw("/tmp/x", "/private/tmp/x", sym, "/tmp"),
				},
				Links:  []string{"/Users/me/tmplink", "/tmp"},
				Volume: "/private/tmp",
			},
		},
		{
			name: "dangling link: its target's tail kept under /",
			in:   "/Users/me/dangling",
			want: pathresolve.Result{
				Path:     "/nowhere/x",
				Rewrites: []pathresolve.Rewrite{rw("/Users/me/dangling", "/nowhere/x", sym, "/Users/me/dangling")},
				Links:    []string{"/Users/me/dangling"},
				Volume:   "/",
			},
		},
		{
			name: "missing tail kept under the longest existing prefix",
			in:   "/Users/me/new/dir/file.txt",
			want: pathresolve.Result{Path: "/Users/me/new/dir/file.txt", Volume: "/Users/me"},
		},
		{
			// Spelling matrix: a rule spelled with the data-volume firmlink covers the file.
			name: "data-volume spelling of a firmlinked directory",
			in:   "/System/Volumes/Data/Users/me/Documents",
			want: pathresolve.Result{
				Path:     "/Users/me/Documents",
				Rewrites: []pathresolve.Rewrite{rw("/System/Volumes/Data/Users/me/Documents", "/Users/me/Documents", firm, "/Users")},
				Volume:   "/Users/me/Documents", Exists: true,
			},
		},
		{
			name: "data-volume spelling of private/tmp",
			in:   "/System/Volumes/Data/private/tmp/x",
			want: pathresolve.Result{
				Path:     "/private/tmp/x",
				Rewrites: []pathresolve.Rewrite{rw("/System/Volumes/Data/private/tmp/x", "/private/tmp/x", firm, "/private")},
				Volume:   "/private/tmp",
			},
		},
		{
			name: "nested firmlink under /System",
			in:   "/System/Volumes/Data/System/Library/Caches",
			want: pathresolve.Result{
				Path:     "/System/Library/Caches",
				Rewrites: []pathresolve.Rewrite{rw("/System/Volumes/Data/System/Library/Caches", "/System/Library/Caches", firm, "/System/Library/Caches")},
				Volume:   "/System/Library/Caches", Exists: true,
			},
		},
		{
			name: "data-volume firmlink in another case on a case-insensitive volume",
			in:   "/system/volumes/data/users/me",
			want: pathresolve.Result{
				Path:     "/Users/me",
				Rewrites: []pathresolve.Rewrite{rw("/system/volumes/data/users/me", "/Users/me", firm, "/Users")},
				Volume:   "/Users/me", Exists: true,
			},
		},
		{
			name: "link into the data volume, then the firmlink",
			in:   "/Users/me/data/.zshrc",
			want: pathresolve.Result{
				Path: "/Users/me/.zshrc",
				Rewrites: []pathresolve.Rewrite{
					rw("/Users/me/data/.zshrc", "/System/Volumes/Data/Users/me/.zshrc", sym, "/Users/me/data"),
					rw("/System/Volumes/Data/Users/me/.zshrc", "/Users/me/.zshrc", firm, "/Users"),
				},
				Links:  []string{"/Users/me/data"},
				Volume: "/Users/me/.zshrc", Exists: true,
			},
		},
		{
			name: "data volume outside any firmlink stays",
			in:   "/System/Volumes/Data/sw/bin",
			want: pathresolve.Result{Path: "/System/Volumes/Data/sw/bin", Volume: "/System/Volumes/Data"},
		},
		{
			// Spelling matrix, default volume: a rule spelled in another case
			// covers the file, so the caller's spelling is kept, not rewritten.
			name: "other case on the case-insensitive volume kept as written",
			in:   "/users/ME/documents",
			want: pathresolve.Result{Path: "/users/ME/documents", Volume: "/users/ME/documents", Exists: true},
		},
		{
			name: "root link in another case",
			in:   "/TMP/x",
			want: pathresolve.Result{
				Path:     "/private/tmp/x",
				Rewrites: []pathresolve.Rewrite{rw("/TMP/x", "/private/tmp/x", sym, "/TMP")},
				Links:    []string{"/TMP"},
				Volume:   "/private/tmp",
			},
		},
		{
			// Spelling matrix, default volume: composed where the disk has the
			// name decomposed covers the file; the spelling is kept.
			name: "composed lookup of a decomposed name",
			in:   macfs.NFC("/Users/me/café.txt"),
			want: pathresolve.Result{
				Path:   macfs.NFC("/Users/me/café.txt"),
				Volume: macfs.NFC("/Users/me/café.txt"), Exists: true,
			},
		},
		{
			// Spelling matrix: ... and the reverse.
			name: "decomposed lookup of a composed name",
			in:   macfs.NFD("/Users/me/naïve.txt"),
			want: pathresolve.Result{
				Path:   macfs.NFD("/Users/me/naïve.txt"),
				Volume: macfs.NFD("/Users/me/naïve.txt"), Exists: true,
			},
		},
		{
			// Spelling matrix: a rule for a name created later in another case:
			// the tail is kept on the case-insensitive volume.
			name: "name to be created later, in another case",
			in:   "/Users/me/Documents/NEW.TXT",
			want: pathresolve.Result{Path: "/Users/me/Documents/NEW.TXT", Volume: "/Users/me/Documents"},
		},
		{
			// Spelling matrix, case-sensitive volume: the volume is the one of
			// the path's longest existing prefix.
			name: "file on a case-sensitive volume",
			in:   "/Volumes/CS/Src/main.go",
			want: pathresolve.Result{Path: "/Volumes/CS/Src/main.go", CaseSensitive: true, Volume: "/Volumes/CS/Src/main.go", Exists: true},
		},
		{
			name: "other case on a case-sensitive volume is another, missing file",
			in:   "/Volumes/CS/src/main.go",
			want: pathresolve.Result{Path: "/Volumes/CS/src/main.go", CaseSensitive: true, Volume: "/Volumes/CS"},
		},
		{
			name: "mount point spelled in another case on the insensitive parent",
			in:   "/volumes/cs/Src",
			want: pathresolve.Result{Path: "/volumes/cs/Src", CaseSensitive: true, Volume: "/volumes/cs/Src", Exists: true},
		},
		{
			name: "longest existing prefix above the mount",
			in:   "/Volumes/Other/x",
			want: pathresolve.Result{Path: "/Volumes/Other/x", Volume: "/Volumes"},
		},
		{
			name: "link from the insensitive volume into the sensitive one",
			in:   "/Users/me/cs/new.go",
			want: pathresolve.Result{
				Path:          "/Volumes/CS/Src/new.go",
				Rewrites:      []pathresolve.Rewrite{rw("/Users/me/cs/new.go", "/Volumes/CS/Src/new.go", sym, "/Users/me/cs")},
				Links:         []string{"/Users/me/cs"},
				CaseSensitive: true, Volume: "/Volumes/CS/Src",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Resolve(tt.in)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.in, err)
			}
			want := tt.want
			want.Input = tt.in
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Resolve(%q) (-want +got):\n%s", tt.in, diff)
			}
			checkResult(t, r, got)
		})
	}
}

func TestResolveErrors(t *testing.T) {
	fsys, r := macTree(t)
	must(t, fsys.WriteFile("/Users/me/Private/key", nil))
	must(t, fsys.Deny("/Users/me/Private"))
	must(t, fsys.Symlink("/etc/hosts/", "/Users/me/hostsdir")) // "file/" is ENOTDIR
	tests := []struct {
		name, in, component string
		is                  error
	}{
		{"empty", "", "", pathresolve.ErrNotAbsolute},
		{"relative", "rel/x", "rel", pathresolve.ErrNotAbsolute},
		{"dot relative", "./x", ".", pathresolve.ErrNotAbsolute},
		{"dot", "/a/./b", "/a/.", pathresolve.ErrNotNormal},
		{"dotdot", "/a/../b", "/a/..", pathresolve.ErrNotNormal},
		{"final dotdot", "/a/..", "/a/..", pathresolve.ErrNotNormal},
		{"leading double slash", "//a", "//", pathresolve.ErrNotNormal},
		{"double slash", "/a//b", "/a//", pathresolve.ErrNotNormal},
		{"trailing slash", "/a/b/", "/a/b/", pathresolve.ErrNotNormal},
		{"NUL", "/a/b\x00c/d", "/a/b\x00c", pathresolve.ErrNUL},
		{"two-link cycle", "/Users/me/loopA/x", "/Users/me/loopA", pathresolve.ErrLoop},
		{"self cycle", "/Users/me/self", "/Users/me/self", pathresolve.ErrLoop},
		{"through a file", "/etc/hosts/x", "/private/etc/hosts", syscall.ENOTDIR},
		{"link to file with trailing slash", "/Users/me/hostsdir", "/private/etc/hosts", syscall.ENOTDIR},
		{"unsearchable directory", "/Users/me/Private/key", "/Users/me/Private/key", fs.ErrPermission},
		// skip -> gone/../Documents: the kernel fails at the missing name;
		// a lexical ".." would allow a path the kernel never reaches.
		{".. over a missing name", "/Users/me/skip", "/Users/me/gone", fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Resolve(tt.in)
			if !errors.Is(err, tt.is) {
				t.Fatalf("Resolve(%q) = %v, want errors.Is %v", tt.in, err, tt.is)
			}
			var pe *pathresolve.PathError
			if !errors.As(err, &pe) {
				t.Fatalf("Resolve(%q) error %T is not a *PathError", tt.in, err)
			}
			if diff := cmp.Diff([2]string{tt.in, tt.component}, [2]string{pe.Path, pe.Component}); diff != "" {
				t.Errorf("Resolve(%q): PathError {Path, Component} (-want +got):\n%s", tt.in, diff)
			}
			if tt.is == pathresolve.ErrNotAbsolute || tt.is == pathresolve.ErrNotNormal || tt.is == pathresolve.ErrNUL {
				if cerr := pathresolve.CheckAbs(tt.in); !errors.Is(cerr, tt.is) || cerr.Error() != err.Error() {
					t.Errorf("CheckAbs(%q) = %v, want the error Resolve gave: %v", tt.in, cerr, err)
				}
			}
		})
	}
}

func TestCheckAbsAccepts(t *testing.T) {
	for _, p := range []string{"/", "/a", "/a/b", "/a/.b", "/a/..b", "/a/b.", "/ spaced/x"} {
		if err := pathresolve.CheckAbs(p); err != nil {
			t.Errorf("CheckAbs(%q) = %v, want nil", p, err)
		}
	}
}

// The limit is the kernel's: MaxSymlinks links resolve, one more is ErrLoop.
func TestSymlinkLimit(t *testing.T) {
	for _, max := range []int{0, 5} {
		limit := max
		if limit == 0 {
			limit = pathresolve.MaxSymlinks
		}
		fsys := macfs.New()
		must(t, fsys.MkdirAll("/d/end"))
		// /d/c0 -> c1 -> ... -> c<limit> -> end: limit+1 links from c0.
		for i := 0; i < limit; i++ {
			must(t, fsys.Symlink("c"+itoa(i+1), "/d/c"+itoa(i)))
		}
		must(t, fsys.Symlink("end", "/d/c"+itoa(limit)))
		r := pathresolve.New(fsys, pathresolve.WithMaxSymlinks(max))
		res, err := r.Resolve("/d/c1")
		if err != nil || res.Path != "/d/end" || len(res.Links) != limit {
			t.Errorf("limit %d: Resolve(/d/c1) with %d links = %q, %d links, %v; want /d/end", limit, limit, res.Path, len(res.Links), err)
		}
		if _, err := r.Resolve("/d/c0"); !errors.Is(err, pathresolve.ErrLoop) {
			t.Errorf("limit %d: Resolve(/d/c0) with %d links = %v, want ErrLoop", limit, limit+1, err)
		}
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

func TestLinksDeduplicated(t *testing.T) {
	fsys, r := newMac(t)
	// /Users/me/a -> /tmp/b, /private/tmp/b -> /tmp/c: /tmp is passed twice.
	must(t, fsys.Symlink("/tmp/b", "/Users/me/a"))
	must(t, fsys.Symlink("/tmp/c", "/private/tmp/b"))
	res, err := r.Resolve("/Users/me/a")
	must(t, err)
	want := []string{"/Users/me/a", "/tmp", "/private/tmp/b"}
	if diff := cmp.Diff(want, res.Links); diff != "" {
		t.Errorf("Links (-want +got):\n%s", diff)
	}
	if len(res.Rewrites) != 4 {
		t.Errorf("Rewrites = %+v, want 4 (a, /tmp, b, /tmp)", res.Rewrites)
	}
	checkResult(t, r, res)
}

func TestNoFirmlinksUnlessGiven(t *testing.T) {
	fsys := macfs.NewMacOS()
	r := pathresolve.New(fsys)
	res, err := r.Resolve("/System/Volumes/Data/Users/me")
	must(t, err)
	if res.Path != "/System/Volumes/Data/Users/me" || len(res.Rewrites) != 0 {
		t.Errorf("without WithFirmlinks: Resolve = %q, %+v; want the data spelling kept", res.Path, res.Rewrites)
	}
}

func TestCaseSensitiveFirmlinkNotFolded(t *testing.T) {
	fsys := macfs.New()
	must(t, fsys.MountCaseSensitive("/System/Volumes/Data"))
	must(t, fsys.MkdirAll("/System/Volumes/Data/Users"))
	must(t, fsys.MkdirAll("/System/Volumes/Data/users"))
	must(t, fsys.Firmlink("/Users", "/System/Volumes/Data/Users"))
	r := pathresolve.New(fsys, pathresolve.WithFirmlinks(fsys.Firmlinks()))
	res, err := r.Resolve("/System/Volumes/Data/users")
	must(t, err)
	if res.Path != "/System/Volumes/Data/users" || !res.CaseSensitive {
		t.Errorf("Resolve = %q (case-sensitive %v), want the other-case directory kept on a case-sensitive volume", res.Path, res.CaseSensitive)
	}
}

func TestReasonString(t *testing.T) {
	got := []string{pathresolve.ReasonSymlink.String(), pathresolve.ReasonFirmlink.String(), pathresolve.Reason(9).String()}
	if diff := cmp.Diff([]string{"symlink", "firmlink", "Reason(9)"}, got); diff != "" {
		t.Errorf("Reason.String (-want +got):\n%s", diff)
	}
}

func TestCaseSensitiveError(t *testing.T) {
	var err error = &pathresolve.CaseSensitiveError{Path: "/Volumes/CS/src", Volume: "/Volumes/CS"}
	if !errors.Is(err, pathresolve.ErrCaseSensitive) {
		t.Errorf("errors.Is(%v, ErrCaseSensitive) = false", err)
	}
	var ce *pathresolve.CaseSensitiveError
	if !errors.As(fmtWrap(err), &ce) || ce.Volume != "/Volumes/CS" {
		t.Errorf("errors.As through a wrap lost the CaseSensitiveError: %v", ce)
	}
	for _, s := range []string{`"/Volumes/CS/src"`, `"/Volumes/CS"`, "case-sensitive volume"} {
		if !contains(err.Error(), s) {
			t.Errorf("message %q does not mention %s", err.Error(), s)
		}
	}
}
