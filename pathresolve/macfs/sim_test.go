package macfs_test

import (
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/procage-go/procage/pathresolve/macfs"
)

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func TestNormalization(t *testing.T) {
	composed := "/Users/me/café naïve Ågren Çà"
	d := macfs.NFD(composed)
	if d == composed || len([]rune(d)) != len([]rune(composed))+5 {
		t.Fatalf("NFD(%q) = %q, want 5 letters decomposed", composed, d)
	}
	if got := macfs.NFC(d); got != composed {
		t.Errorf("NFC(NFD(%q)) = %q", composed, got)
	}
	if got := macfs.NFD("e\u0301"); got != "e\u0301" {
		t.Errorf("NFD of an already decomposed name changed it: %q", got)
	}
}

func TestLookups(t *testing.T) {
	f := macfs.NewMacOS()
	must(t, f.WriteFile(macfs.NFD("/Users/me/Café"), nil))
	must(t, f.MountCaseSensitive("/Volumes/CS"))
	must(t, f.WriteFile("/Volumes/CS/File", nil))
	must(t, f.Symlink("loop", "/Users/me/loop"))
	must(t, f.WriteFile("/Users/me/Private/key", nil))
	must(t, f.Deny("/Users/me/Private"))

	tests := []struct {
		name string
		path string
		mode fs.FileMode // type bits wanted, when err is nil
		err  error
	}{
		{"final link not followed", "/tmp", fs.ModeSymlink, nil},
		{"intermediate link followed", "/tmp/.", fs.ModeDir, nil},
		{"firmlink both ways", "/System/Volumes/Data/Users/me/.zshrc", 0, nil},
		{"case folded on the default volume", "/USERS/ME/.ZSHRC", 0, nil},
		{"composed finds decomposed", "/users/me/CAFÉ", 0, nil},
		{"case kept on a case-sensitive volume", "/Volumes/CS/file", 0, syscall.ENOENT},
		{"exact case on a case-sensitive volume", "/Volumes/cs/File", 0, nil},
		{"through a file", "/etc/hosts/x", 0, syscall.ENOTDIR},
		{"cycle", "/Users/me/loop/x", 0, syscall.ELOOP},
		{"unsearchable", "/Users/me/Private/key", 0, syscall.EACCES},
		{"unsearchable dir itself visible", "/Users/me/Private", fs.ModeDir, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fi, err := f.Lstat(tt.path)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Lstat(%q) = %v, want %v", tt.path, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lstat(%q): %v", tt.path, err)
			}
			if got := fi.Mode().Type(); got != tt.mode {
				t.Errorf("Lstat(%q) type = %v, want %v", tt.path, got, tt.mode)
			}
		})
	}

	if target, err := f.Readlink("/var"); err != nil || target != "private/var" {
		t.Errorf("Readlink(/var) = %q, %v; want private/var", target, err)
	}
	if _, err := f.Readlink("/private"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Readlink of a directory = %v, want EINVAL", err)
	}
	for p, want := range map[string]bool{"/": false, "/tmp": false, "/Volumes/CS": true, "/Volumes/CS/File": true} {
		if got, err := f.CaseSensitive(p); err != nil || got != want {
			t.Errorf("CaseSensitive(%q) = %v, %v; want %v", p, got, err, want)
		}
	}
	if _, err := f.CaseSensitive("/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CaseSensitive of a missing path = %v, want ENOENT", err)
	}
}

func TestMutationErrors(t *testing.T) {
	f := macfs.NewMacOS()
	if err := f.Symlink("x", "/tmp"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Symlink over /tmp = %v, want EEXIST", err)
	}
	if err := f.Symlink("x", "/TMP"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Symlink over /TMP on a case-insensitive volume = %v, want EEXIST", err)
	}
	if err := f.MountCaseSensitive("/Users/me"); !errors.Is(err, syscall.ENOTEMPTY) {
		t.Errorf("mounting over a non-empty directory = %v, want ENOTEMPTY", err)
	}
	if err := f.MkdirAll("/etc/hosts/sub"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("MkdirAll under a file = %v, want ENOTDIR", err)
	}
	if err := f.Firmlink("/x", "/etc/hosts"); !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Firmlink to a file = %v, want ENOTDIR", err)
	}
}

func TestCreateThroughLinksAndFirmlinks(t *testing.T) {
	f := macfs.NewMacOS()
	must(t, f.WriteFile("/tmp/a", []byte("hi"))) // lands in /private/tmp
	for _, p := range []string{"/private/tmp/a", "/System/Volumes/Data/private/tmp/a"} {
		got, err := f.ReadFile(p)
		if err != nil || string(got) != "hi" {
			t.Errorf("ReadFile(%q) = %q, %v; want hi", p, got, err)
		}
	}
}

func TestCalls(t *testing.T) {
	f := macfs.NewMacOS()
	f.ResetCalls()
	f.Lstat("/tmp")
	f.Lstat("/tmp")
	f.Lstat("/nope")
	f.Readlink("/tmp")
	want := map[string]int{"/tmp": 2, "/nope": 1}
	if diff := cmp.Diff(want, f.Calls("Lstat")); diff != "" {
		t.Errorf("Calls(Lstat) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"/tmp": 1}, f.Calls("Readlink")); diff != "" {
		t.Errorf("Calls(Readlink) (-want +got):\n%s", diff)
	}
	if got := f.Calls("CaseSensitive"); len(got) != 0 {
		t.Errorf("Calls(CaseSensitive) = %v, want none", got)
	}
}
