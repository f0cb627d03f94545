package linux

import (
	"strings"
	"testing"
)

// TestNewNamesFilter runs the new-names program in x/net/bpf's VM: every
// creating call is sent to the supervisor, open and openat only with
// O_CREAT, landlock_create_ruleset answers ENOSYS, the rest is allowed,
// and a foreign arch or an x32 number is killed.
func TestNewNamesFilter(t *testing.T) {
	prog, err := NewNamesFilter(ArchAMD64)
	if err != nil {
		t.Fatal(err)
	}
	nr := func(name string) uint32 {
		n, ok := ArchAMD64.Syscall(name)
		if !ok {
			t.Fatalf("no %s", name)
		}
		return n
	}
	const rdwr, creat, tmpfile = 2, 0o100, 0o20200000
	cases := []struct {
		name string
		arch uint32
		nr   uint32
		args []uint64
		want uint32
	}{
		{"open O_CREAT", ArchAMD64.AuditArch, nr("open"), []uint64{0, rdwr | creat}, retUserNotif},
		{"open without O_CREAT", ArchAMD64.AuditArch, nr("open"), []uint64{0, rdwr}, allow},
		{"openat O_CREAT", ArchAMD64.AuditArch, nr("openat"), []uint64{0, 0, creat}, retUserNotif},
		{"openat O_CREAT in the high word only", ArchAMD64.AuditArch, nr("openat"), []uint64{0, 0, creat << 32}, allow},
		{"openat O_TMPFILE (no name)", ArchAMD64.AuditArch, nr("openat"), []uint64{0, 0, tmpfile}, allow},
		{"openat read", ArchAMD64.AuditArch, nr("openat"), []uint64{0, 0, 0}, allow},
		{"creat", ArchAMD64.AuditArch, nr("creat"), nil, retUserNotif},
		{"mkdirat", ArchAMD64.AuditArch, nr("mkdirat"), nil, retUserNotif},
		{"renameat2", ArchAMD64.AuditArch, nr("renameat2"), nil, retUserNotif},
		{"symlink", ArchAMD64.AuditArch, nr("symlink"), nil, retUserNotif},
		{"linkat", ArchAMD64.AuditArch, nr("linkat"), nil, retUserNotif},
		{"mknod", ArchAMD64.AuditArch, nr("mknod"), nil, retUserNotif},
		{"bind", ArchAMD64.AuditArch, nr("bind"), nil, retUserNotif},
		{"connect (names nothing)", ArchAMD64.AuditArch, nr("connect"), nil, allow},
		{"landlock_create_ruleset", ArchAMD64.AuditArch, nr("landlock_create_ruleset"), nil, retErrno | uint32(ENOSYS)},
		{"read", ArchAMD64.AuditArch, nr("read"), nil, allow},
		{"unlinkat (removes, creates nothing)", ArchAMD64.AuditArch, nr("unlinkat"), nil, allow},
		{"i386 entry", 0x40000003, 5, []uint64{0, creat}, kill},
		{"x32 open", ArchAMD64.AuditArch, x32SyscallBit | nr("open"), []uint64{0, creat}, kill},
	}
	for _, c := range cases {
		if got := runFilter(t, prog, seccompData(c.arch, c.nr, c.args...)); got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, got, c.want)
		}
	}
	for _, c := range NewNameCalls {
		if _, ok := ArchAMD64.Syscall(c.Syscall); !ok {
			t.Errorf("%s: not an amd64 system call", c.Syscall)
		}
	}
	if _, err := NewNamesFilter(ArchARM64); err == nil {
		t.Error("NewNamesFilter(arm64): nil error")
	}
}

// TestNewNameRules: the deny list's folding (ASCII case, KELVIN SIGN,
// long s; nothing else), its three markers, and Decide's use of it for a
// plan that supervises new names.
func TestNewNameRules(t *testing.T) {
	for _, c := range []struct {
		name string
		want string // the rule's name, "" for none
	}{
		{".git", ".git"}, {".GIT", ".git"}, {".Git", ".git"}, {"commondir", "commondir"},
		{"hoo\u212as", "hooks"}, {"hook\u017f", "hooks"}, {"HEAD", "HEAD"}, {"head", "HEAD"},
		{"refs", "refs"}, {"ref\u017f", "refs"}, {"con\ufb01g", "config"}, {"con\ufb01g.worktree", "config.worktree"},
		{"commondir", "commondir"}, {"attribute\u017f", "attributes"}, {".g\u0131t", ".git"}, {".g\u200bit", ".git"},
		{"con\u00adfig", "config"}, {".git ", ".git"}, {".git..", ".git"}, {".gi\U000e0001t", ".git"},
		{"git", ""}, {"hooks.d", ""}, {".", ""}, {"", ""}, {"\u200b", ""},
	} {
		r, ok := newNameRule(c.name)
		if got := map[bool]string{true: r.Name, false: ""}[ok]; got != c.want {
			t.Errorf("newNameRule(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	markers := 0
	for _, r := range NewNameRules {
		if r.Class == NewNameMarker {
			markers++
		}
	}
	if markers != 3 {
		t.Errorf("%d markers, want HEAD, objects and refs", markers)
	}
	pl := mustPlan(t, nil)
	pl.Tier, pl.NewNames = TierT1, true
	pl.Mounts = []Mount{{Kind: MountWritable, Path: "/w"}}
	pl.Rules = append(pl.Rules, PathRule{Path: "/w", Access: fsRead | fsWrite, Layer: LayerPolicy})
	for _, c := range []struct {
		op      Op
		path    string
		allowed bool
	}{
		{OpMkdir, "/w/a/.git", false}, {OpCreate, "/w/.git/commondir", false}, {OpMkdir, "/w/.git/hooks", false},
		{OpMkdir, "/w/src/hooks", true}, {OpCreate, "/w/src/main.go", true}, {OpSymlink, "/w/.GIT", false},
	} {
		d, err := pl.Decide(Access{Op: c.op, Path: c.path})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != c.allowed || !c.allowed && (d.NewName == nil || d.Errno != EPERM || !strings.Contains(d.String(), "new-names supervisor")) {
			t.Errorf("%s %s: %v", c.op, c.path, d)
		}
	}
	pl.NewNames = false
	if d, _ := pl.Decide(Access{Op: OpMkdir, Path: "/w/a/.git"}); !d.Allowed {
		t.Errorf("without the supervisor: %v", d)
	}
}
