package tests

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// Root's metadata calls at T1 (issue 22): seccomp lets root change modes,
// owners and extended attributes there, so nothing the run holds may be
// on a host mount it can write: everything the policy does not grant
// write is on the run's read-only view, the descriptors it is handed
// included (reopened through that view, or copied through a pipe). Each
// canary changes only what is harmless to the host if the hole were open
// (an added u+x, a chown to the owner it has) and restores the mode.

// metaScript tries, on each target, a mode change (u+x), a chown to the
// caller's own ids and a POSIX ACL equivalent to u+x (an ACL write is a
// mode change: posix_acl_update_mode), each as "NAME-OP: ok" or "NAME-OP:
// FAIL <message>". The shell's own descriptors are /proc/$$/fd/N: in the
// subshell that tries, /proc/self/fd/1 and 2 are its capture's pipe.
func metaScript(dir string, targets [][2]string) string {
	var b strings.Builder
	b.WriteString(`cd ` + dir + ` || exit 9
try() { if out=$(eval "$2" 2>&1); then echo "$1: ok"; else echo "$1: FAIL $out" | tr '\n' ' '; echo; fi; }
acl() { /usr/bin/python3 -c "import os,struct,sys
p=sys.argv[1]; m=os.stat(p).st_mode
e=lambda t,q: struct.pack('<HHI',t,q,0xffffffff)
os.setxattr(p,'system.posix_acl_access',struct.pack('<I',2)+e(1,((m>>6)&7)|1)+e(4,(m>>3)&7)+e(0x20,m&7))" "$1"; }
`)
	for _, t := range targets {
		fmt.Fprintf(&b, "try %s-chmod 'chmod u+x %s'\n", t[0], t[1])
		fmt.Fprintf(&b, "try %s-chown 'chown $(id -u):$(id -g) %s'\n", t[0], t[1])
		fmt.Fprintf(&b, "try %s-acl 'acl %s'\n", t[0], t[1])
	}
	return b.String()
}

// parseResults reads metaScript's lines.
func parseResults(s string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			got[k] = v
		}
	}
	return got
}

// wantRefused checks that every operation on name failed with EROFS,
// EPERM or EACCES (by their messages), or one of also.
func wantRefused(t *testing.T, got map[string]string, name string, also ...string) {
	t.Helper()
	for _, op := range []string{"chmod", "chown", "acl"} {
		k := name + "-" + op
		v, ok := got[k]
		refused := false
		for _, msg := range append([]string{"Read-only file system", "Operation not permitted", "Permission denied"}, also...) {
			refused = refused || strings.HasPrefix(v, "FAIL") && strings.Contains(v, msg)
		}
		switch {
		case !ok:
			t.Errorf("%s: no result", k)
		case !refused:
			t.Errorf("%s: %q, want EROFS, EPERM or EACCES", k, v)
		default:
			t.Logf("%s: %s", k, v)
		}
	}
}

// hostMeta records a host file's mode and owner, and restores the mode
// when the test ends (were a hole open, the canary's u+x stays harmless
// until then).
type hostMeta struct {
	path     string
	mode     uint32
	uid, gid uint32
}

func recordMeta(t *testing.T, path string) hostMeta {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	m := hostMeta{path, st.Mode &^ unix.S_IFMT, st.Uid, st.Gid}
	t.Cleanup(func() { _ = os.Chmod(path, os.FileMode(m.mode&0o777)) })
	return m
}

// check reports a change of the host file's mode or owner.
func (m hostMeta) check(t *testing.T) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(m.path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&^unix.S_IFMT != m.mode || st.Uid != m.uid || st.Gid != m.gid {
		t.Errorf("%s on the host: mode %o owner %d:%d, was %o %d:%d", m.path, st.Mode&^unix.S_IFMT, st.Uid, st.Gid, m.mode, m.uid, m.gid)
	}
}

// runStdio runs /bin/sh -c script in c with the given stdio.
func runStdio(t *testing.T, c *cage.Cage, script string, stdin io.Reader, stdout, stderr io.Writer, extra ...*os.File) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := c.Command(ctx, "/bin/sh", "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = stdin, stdout, stderr, extra
	return cmd.Run()
}

// TestT1RootMetadataHostFiles: at T1, mode, owner and ACL changes of the
// host's files fail: a file outside the grants (/etc/hostname), /dev/null
// by path and as the nil stdin and stderr the cage gives
// (/proc/PID/fd/0 and 2), a file under /sys, a file of the
// run's own /proc whose mode is the host's too (/proc/buddyinfo: procfs
// keeps one proc_dir_entry for every mount, fs/proc/generic.c
// proc_notify_change), and a read-only working directory (re-entered
// after the mounts). The host's modes are unchanged afterwards.
func TestT1RootMetadataHostFiles(t *testing.T) {
	requireT1(t)
	ro := tempHome(t)
	sys := "/sys/kernel/mm/transparent_hugepage/enabled"
	requireFile(t, sys)
	requireFile(t, "/proc/buddyinfo")
	targets := [][2]string{
		{"hostname", "/etc/hostname"}, {"devnull", "/dev/null"}, {"fd0", "/proc/$$/fd/0"}, {"fd2", "/proc/$$/fd/2"},
		{"sys", sys}, {"proc", "/proc/buddyinfo"}, {"cwd", "."},
	}
	var metas []hostMeta
	for _, p := range []string{"/etc/hostname", "/dev/null", sys, "/proc/buddyinfo", ro} {
		metas = append(metas, recordMeta(t, p))
	}
	c := newCage(t, policy(t, profile.Fork(), profile.Read(ro)), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	var out strings.Builder
	if err := runStdio(t, c, metaScript(ro, targets), nil, &out, nil); err != nil {
		t.Fatalf("script: %v (stdout %q)", err, out.String())
	}
	got := parseResults(out.String())
	for _, tg := range targets {
		if tg[0] == "proc" && os.Geteuid() != 0 {
			// Its /proc stays read-write (it owns none of /proc's files):
			// procfs has no ACLs.
			wantRefused(t, got, tg[0], "Operation not supported")
			continue
		}
		wantRefused(t, got, tg[0])
	}
	for _, m := range metas {
		m.check(t)
	}
	// /proc's mode as another procfs mount shows it (the host's own may
	// keep its cached inode).
	var mode strings.Builder
	if err := runStdio(t, c, "stat -c %a /proc/buddyinfo", nil, &mode, nil); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(mode.String()) != fmt.Sprintf("%o", metas[3].mode&0o777) {
		t.Errorf("/proc/buddyinfo in a fresh procfs: mode %s, was %o", mode.String(), metas[3].mode&0o777)
	}
}

// TestT1RootMetadataHanded: at T1, the terminal and the file root hands
// over as stdio cannot have their mode, owner or ACL changed, through the
// descriptor (/proc/PID/fd/N: the terminal is reopened through the run's
// read-only /dev, the file copied through a pipe) or the terminal's path
// (/dev/pts/N), and the terminal is still a terminal. A caller that is
// not root still reaches its own terminal and file through the
// descriptor (the T1 limitation the docs name), so only root checks
// those.
func TestT1RootMetadataHanded(t *testing.T) {
	requireT1(t)
	_, slave := testenv.OpenPTY(t)
	dir := tempHome(t)
	victim := filepath.Join(dir, "out")
	if err := os.WriteFile(victim, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(victim, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pts, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", slave.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	targets := [][2]string{{"tty-fd0", "/proc/$$/fd/0"}, {"tty-fd2", "/proc/$$/fd/2"}, {"pts", pts}, {"file-fd1", "/proc/$$/fd/1"}}
	metas := []hostMeta{recordMeta(t, pts), recordMeta(t, victim)}
	c := newCage(t, policy(t, profile.Fork()), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	// The terminal is still one, and fchmod on it fails too.
	script := metaScript("/", targets) + `try isatty 'test -t 0'
if [ -t 2 ]; then echo "isatty2: ok"; else echo "isatty2: FAIL"; fi
try fchmod '/usr/bin/python3 -c "import os; os.fchmod(0, 0o700)"'
`
	if err := runStdio(t, c, script, slave, f, slave); err != nil {
		b, _ := os.ReadFile(victim)
		t.Fatalf("script: %v (stdout %q)", err, b)
	}
	b, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	got := parseResults(string(b))
	wantRefused(t, got, "pts")
	want(t, got, "isatty", "ok")
	want(t, got, "isatty2", "ok")
	if os.Geteuid() == 0 {
		wantRefused(t, got, "tty-fd0")
		wantRefused(t, got, "tty-fd2")
		want(t, got, "fchmod", map[bool]string{true: "Read-only file system", false: "Operation not permitted"}[rootMetaLifted()])
		metas[0].check(t)
	}
	// Root's stdout is a pipe the cage copies into the file: a change
	// reaches the pipe only.
	t.Logf("file-fd1: chmod %s, chown %s, acl %s", got["file-fd1-chmod"], got["file-fd1-chown"], got["file-fd1-acl"])
	if os.Geteuid() == 0 {
		metas[1].check(t)
	}
}

// TestT1RootMetadataPipes: pipes and sockets are handed over as they are:
// a mode change through /proc/self/fd/N reaches the pipe's or socket's
// own inode, on pipefs or sockfs, which no mount shows by path
// (pipe(7), socket(7)); the caller's end sees it, and nothing else can.
func TestT1RootMetadataPipes(t *testing.T) {
	requireT1(t)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	s0, s1 := os.NewFile(uintptr(sp[0]), "sock0"), os.NewFile(uintptr(sp[1]), "sock1")
	defer s0.Close()
	defer s1.Close()
	c := newCage(t, policy(t, profile.Fork()), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	script := "chmod 0600 /proc/self/fd/1 && chmod 0600 /proc/self/fd/3 && echo done"
	done := make(chan string, 1)
	go func() { b, _ := io.ReadAll(pr); done <- string(b) }()
	var errb strings.Builder
	err = runStdio(t, c, script, nil, pw, &errb, s1)
	pw.Close()
	out := <-done
	if os.Geteuid() == 0 && !rootMetaLifted() {
		if err == nil || !strings.Contains(errb.String(), "Operation not permitted") {
			t.Fatalf("root's chmod where the kernel lets anonymous inodes change: %v, stderr %q, want EPERM", err, errb.String())
		}
		return
	}
	if err != nil || strings.TrimSpace(out) != "done" {
		t.Fatalf("chmod of the handed pipe and socket: %v, stdout %q, stderr %q", err, out, errb.String())
	}
	for _, e := range []struct {
		f     *os.File
		magic int64
		name  string
	}{{pr, unix.PIPEFS_MAGIC, "pipefs"}, {s0, unix.SOCKFS_MAGIC, "sockfs"}} {
		var sfs unix.Statfs_t
		var st unix.Stat_t
		if err := unix.Fstatfs(int(e.f.Fd()), &sfs); err != nil || sfs.Type != e.magic {
			t.Errorf("%s: file system %#x (%v), want %s", e.f.Name(), sfs.Type, err, e.name)
		}
		if err := unix.Fstat(int(e.f.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: on %s, mode now %o", e.f.Name(), e.name, st.Mode&0o7777)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(pr.Fd()), &st); err != nil || st.Mode&0o777 != 0o600 {
		t.Errorf("the pipe's mode %o (%v): the run's chmod did not reach the pipe's own inode", st.Mode&0o777, err)
	}
}

// TestT1RootExtraFiles: as root at T1 an ExtraFiles entry that is a file
// (on the host's mount) is refused by name, never handed over; a pipe is
// handed. A caller that is not root is handed the file as before.
func TestT1RootExtraFiles(t *testing.T) {
	requireT1(t)
	f, err := os.Create(filepath.Join(tempHome(t), "extra"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	c := newCage(t, policy(t, profile.Fork()), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	err = runStdio(t, c, "test -e /proc/self/fd/4", nil, nil, nil, pw, f)
	if !rootMetaLifted() {
		if err != nil {
			t.Fatalf("a file in ExtraFiles as %d: %v", os.Geteuid(), err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "ExtraFiles[1] ("+f.Name()+")") || !strings.Contains(err.Error(), "hand a pipe or a socket") || !strings.Contains(err.Error(), "T2") {
		t.Fatalf("a file in ExtraFiles as root at T1: %v, want a refusal naming ExtraFiles[1] and what to do", err)
	}
	if err := runStdio(t, c, "test -p /proc/self/fd/3", nil, nil, nil, pw); err != nil {
		t.Errorf("a pipe in ExtraFiles as root at T1: %v", err)
	}
}

// TestT1EveryMountReadOnly: the recursive read-only remount covers every
// submount of the host's tree (/sys, /dev/pts, cgroups, whatever this host
// has): in the run's /proc/self/mountinfo (proc(5)) every mount is
// read-only but the writable tree and (unless root) the run's /proc.
func TestT1EveryMountReadOnly(t *testing.T) {
	requireT1(t)
	w := tempHome(t)
	c := newCage(t, policy(t, profile.Fork(), profile.ReadWrite(w), profile.Read("/proc"), profile.Waive(profile.TrustHandoff)),
		cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	var out strings.Builder
	if err := runStdio(t, c, "cat /proc/self/mountinfo", nil, &out, nil); err != nil {
		t.Fatalf("mountinfo: %v", err)
	}
	rw := map[string]bool{w: true}
	if !rootMetaLifted() {
		rw["/proc"] = true
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ...
		f := strings.Fields(line)
		if len(f) < 6 {
			t.Fatalf("mountinfo line %q", line)
		}
		n++
		mp, opts := f[4], strings.Split(f[5], ",")
		ro := opts[0] == "ro"
		if !ro && !rw[mp] {
			t.Errorf("a read-write mount in the run: %s", line)
		}
		if mp == "/proc" && rootMetaLifted() && !ro {
			t.Errorf("root's /proc is read-write: %s", line)
		}
	}
	if n < 3 {
		t.Fatalf("%d mounts in the run's mountinfo:\n%s", n, out.String())
	}
	t.Logf("%d mounts, all read-only but the writable ones", n)
}

// rootMetaLifted reports a root caller whose chmod, chown and xattr
// calls a T1 cage lets through: not on a kernel that lets an anonymous
// inode's mode change (linuxsandbox.AnonInodeSetattr, before Linux 6.15),
// where they stay refused as at T2 (TestRTRootMetaAnonInode).
func rootMetaLifted() bool { return os.Geteuid() == 0 && !linuxsandbox.AnonInodeSetattr() }

// requireFile fails unless path exists (a host file the test changes).
func requireFile(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// TestLinuxHardLinkIntoWritableTree: a run cannot hard-link a file it may
// only read (a granted read-only file, a host file outside the grants)
// into its writable tree, where root at T1 could then change its mode
// and owner and anyone its content: at T1 the two names are on different
// mounts (link(2): EXDEV), at T2 Landlock refuses a link that would give
// the file more rights than it has where it is (LANDLOCK_ACCESS_FS_REFER,
// Documentation/userspace-api/landlock.rst). A link the user made before
// the run is the same file under a writable name: the run may change it,
// as the docs say (threat model, R-2).
func TestLinuxHardLinkIntoWritableTree(t *testing.T) {
	for _, tier := range []cage.LinuxTier{cage.TierT1, cage.TierT2} {
		t.Run(tier.String(), func(t *testing.T) {
			if tier == cage.TierT1 {
				requireT1(t)
			}
			ro, w := tempHome(t), tempHome(t)
			file := filepath.Join(ro, "f")
			if err := os.WriteFile(file, []byte("before\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := filepath.Join(ro, "linked-before")
			if err := os.WriteFile(before, []byte("before\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(before, filepath.Join(w, "linked-before")); err != nil {
				t.Fatal(err)
			}
			metas := []hostMeta{recordMeta(t, file), recordMeta(t, "/etc/hostname")}
			c := newCage(t, policy(t, profile.Fork(), profile.Read(ro), profile.ReadWrite(w), profile.Waive(profile.TrustHandoff)),
				cage.WithLinuxTier(tier), cage.WithHome(tempHome(t)))
			got := t1Results(t, c, w, fmt.Sprintf(`try granted 'ln %s granted'
try host 'ln /etc/hostname host'
try soft 'ln -s %s soft && echo x >> soft'
try before 'echo run >> linked-before'
`, file, file))
			t.Logf("%v", got)
			for _, name := range []string{"granted", "host"} {
				v := got[name]
				if !strings.HasPrefix(v, "FAIL") || !(strings.Contains(v, "Invalid cross-device link") || strings.Contains(v, "Operation not permitted") || strings.Contains(v, "Permission denied")) {
					t.Errorf("ln of a %s file into the writable tree: %q, want EXDEV, EPERM or EACCES", name, v)
				}
				if _, err := os.Lstat(filepath.Join(w, name)); err == nil {
					t.Errorf("%s: a link was left in the writable tree", name)
				}
			}
			// A symlink in the writable tree leads to the file's own
			// rights: the append goes to the read-only file. (A mode
			// change through it is the open T2 gap of a caller's own
			// files, TestLinuxGapOwnFileMetadata.)
			if v := got["soft"]; !strings.HasPrefix(v, "FAIL") {
				t.Errorf("append through a symlink to a read-only file: %q, want a failure", v)
			}
			if b, err := os.ReadFile(file); err != nil || string(b) != "before\n" {
				t.Errorf("the read-only file holds %q, %v", b, err)
			}
			for _, m := range metas {
				m.check(t)
			}
			// The user's own link: writable through its writable name.
			if v := got["before"]; v != "ok" {
				t.Errorf("append to a link the user made before the run: %q, want ok (a writable name of the file)", v)
			}
			if b, _ := os.ReadFile(before); string(b) != "before\nrun\n" {
				t.Errorf("the file linked before the run holds %q", b)
			}
		})
	}
}
