package linuxsandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// fsRead is the lowering's read right: files and listings.
const fsRead = linux.FSReadFile | linux.FSReadDir

// linkTree makes dir/d (a directory holding f), dir/file, dir/dlink -> d
// and dir/flink -> file, in the kernel's spelling.
func linkTree(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"d/f", "file"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, to := range map[string]string{"dlink": "d", "flink": "file"} {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestEnforceOpenNoFollow: openat2 with RESOLVE_NO_SYMLINKS and the
// component walk (what a caged caller gets: a cage's filter answers
// openat2 with ENOSYS) open the same paths and refuse a link anywhere.
func TestEnforceOpenNoFollow(t *testing.T) {
	dir := linkTree(t)
	cases := []struct {
		rel  string
		want error // nil: opens
	}{
		{"", nil},
		{"d", nil},
		{"d/f", nil},
		{"file", nil},
		{"absent", unix.ENOENT},
		{"d/absent", unix.ENOENT},
		{"file/x", unix.ENOTDIR},
		{"dlink", unix.ELOOP},
		{"dlink/f", unix.ELOOP},
		{"flink", unix.ELOOP},
	}
	for _, walk := range []bool{false, true} {
		for _, tc := range cases {
			p := filepath.Join(dir, tc.rel)
			fd, err := openNoFollow(p, !walk)
			if err == nil {
				var st unix.Stat_t
				if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
					t.Errorf("walk=%v %s: opened a link (%v)", walk, tc.rel, err)
				}
				if got, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); got != p {
					t.Errorf("walk=%v %s: opened %s", walk, tc.rel, got)
				}
				unix.Close(fd)
			}
			if !errors.Is(err, tc.want) && (err != nil || tc.want != nil) {
				t.Errorf("walk=%v %s: %v, want %v", walk, tc.rel, err, tc.want)
			}
		}
	}
	for _, p := range []string{"relative", dir + "/d/../d", dir + "/", dir + "//d"} {
		if _, err := OpenNoFollow(p); !errors.Is(err, unix.EINVAL) {
			t.Errorf("%q: %v, want EINVAL (not a clean absolute path)", p, err)
		}
	}
}

// TestEnforceConfirmAt: what was opened must be at the spelling checked;
// a directory moved after the open, or another one differing in case, is
// refused.
func TestEnforceConfirmAt(t *testing.T) {
	dir := linkTree(t)
	d := filepath.Join(dir, "d")
	fd, st, err := openConfirmed(d)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := confirmAt(fd, st, d); err != nil {
		t.Errorf("in place: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "D"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := confirmAt(fd, st, filepath.Join(dir, "D")); !errors.Is(err, linux.ErrPathChanged) {
		t.Errorf("another directory differing in case only: %v, want linux.ErrPathChanged", err)
	}
	if err := os.Rename(d, d+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("d.moved", d); err != nil {
		t.Fatal(err)
	}
	if err := confirmAt(fd, st, d); !errors.Is(err, linux.ErrPathChanged) {
		t.Errorf("moved and replaced by a link: %v, want linux.ErrPathChanged", err)
	}
	if _, _, err := openConfirmed(d); !errors.Is(err, linux.ErrPathChanged) || !errors.Is(err, unix.ELOOP) {
		t.Errorf("opening the link: %v, want linux.ErrPathChanged and ELOOP", err)
	}
}

// TestEnforceHandles: OpenRules holds a close-on-exec descriptor per
// existing path, above the numbers a child fills first, skips absent
// paths, refuses a link, and shares base rules' descriptors.
func TestEnforceHandles(t *testing.T) {
	dir := linkTree(t)
	rules := []linux.PathRule{
		{Path: filepath.Join(dir, "d"), Access: fsRead, Layer: linux.LayerPolicy},
		{Path: filepath.Join(dir, "file"), Access: fsRead | linux.FSReadDir, Layer: linux.LayerPolicy},
		{Path: filepath.Join(dir, "absent"), Access: fsRead, Layer: linux.LayerPolicy},
		{Path: filepath.Join(dir, "file/x"), Access: fsRead, Layer: linux.LayerPolicy},
		{Path: filepath.Join(dir, "d/f"), Access: linux.FSReadFile, Layer: linux.LayerBase},
	}
	h, err := OpenRules(rules, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.Len() != 3 {
		t.Fatalf("held %d rules, want 3 (d, file, d/f)", h.Len())
	}
	for _, r := range h.rules {
		flags, err := unix.FcntlInt(uintptr(r.fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("%s: fd %d flags %#x (%v), want close-on-exec", r.path, r.fd, flags, err)
		}
		if r.fd < heldFloor() {
			t.Errorf("%s: fd %d, want at least %d", r.path, r.fd, heldFloor())
		}
	}
	// The ruleset too: above the child's descriptor shuffle, so a spawn
	// uses its cage's calls as built (no duplicate, no calls of its own).
	rs, err := BuildRuleset(linux.DenyAll(KernelABI()), h)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if flags, err := unix.FcntlInt(uintptr(rs.FD()), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("ruleset fd %d flags %#x (%v), want close-on-exec", rs.FD(), flags, err)
	}
	if rs.FD() < heldFloor() {
		t.Errorf("ruleset fd %d, want at least %d", rs.FD(), heldFloor())
	}
	if a := h.rules[1].access; a&linux.FSReadDir != 0 {
		t.Errorf("a file's rule keeps %s, want file rights only", a)
	}
	h2, err := OpenRules(rules[4:], nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.rules[2].fd != h2.rules[0].fd {
		t.Errorf("base rule opened twice: fds %d and %d", h.rules[2].fd, h2.rules[0].fd)
	}
	owned := h.rules[0].fd
	h.Close()
	if _, err := unix.FcntlInt(uintptr(owned), unix.F_GETFD, 0); err != unix.EBADF {
		t.Errorf("after Close, fd %d: %v, want EBADF", owned, err)
	}
	if _, err := unix.FcntlInt(uintptr(h2.rules[0].fd), unix.F_GETFD, 0); err != nil {
		t.Errorf("a shared base descriptor closed with one holder still alive: %v", err)
	}
	h2.Close()

	_, err = OpenRules([]linux.PathRule{{Path: filepath.Join(dir, "dlink"), Access: fsRead, Layer: linux.LayerPolicy}}, nil)
	if !errors.Is(err, linux.ErrPathChanged) {
		t.Errorf("a rule on a link: %v, want linux.ErrPathChanged", err)
	}
}

// TestEnforceHeldRulesBindInodes: a ruleset built later from Handles binds
// the inode opened, not what the name means by then: a directory swapped
// for a link to a secret one after the open grants the moved directory,
// not the secret.
func TestEnforceHeldRulesBindInodes(t *testing.T) {
	pl := lower(t, profile.Fork())
	needPlan(t, pl)
	dir := linkTree(t)
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(dir, "d")
	held := hold(t, append(pl.Rules, linux.PathRule{Path: d, Access: fsRead, Layer: linux.LayerPolicy}))
	if err := os.Rename(d, d+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secretDir, d); err != nil {
		t.Fatal(err)
	}
	out, ws, err := spawnHeld(t, pl, held, pl.Rules, "/bin/sh", "-c", "cat "+secret+"; cat "+d+"/secret; cat "+d+".old/f")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "s3cret") || !strings.HasSuffix(out, "x") || ws.ExitStatus() != 0 {
		t.Errorf("status %d, output %q: want the secret refused twice and the moved directory's file read", ws.ExitStatus(), out)
	}
	if strings.Count(out, "Permission denied") != 2 {
		t.Errorf("want two Permission denied errors, got %q", out)
	}
}
