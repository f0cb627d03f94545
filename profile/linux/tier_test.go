package linux

import (
	"errors"
	"strings"
	"testing"

	"github.com/procage-go/procage/profile"
)

// TestT1Gaps: at T1 a home read needs no gap (the stores are hidden); a
// writable tree keeps the trust-handoff refusal, narrowed to the names a
// run can create; a writable home keeps a secrets part for stores that do
// not exist. At T2 each is refused as before.
func TestT1Gaps(t *testing.T) {
	const home = "/home/alice"
	lower := func(tier Tier, opts ...profile.Option) (*Plan, error) {
		t.Helper()
		pol, err := profile.New(profile.BaseV1, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return Lower(pol, Env{Env: profile.Env{Home: home}, Tier: tier})
	}
	if _, err := lower(TierT2, profile.Read(home)); !hasGap(err, profile.GapSecrets) {
		t.Errorf("T2 home read: %v, want the secrets gap", err)
	}
	pl, err := lower(TierT1, profile.Read(home))
	if err != nil {
		t.Fatalf("T1 home read: %v, want no gap", err)
	}
	if !hasMount(pl, MountHide, home+"/.ssh") || !hasMount(pl, MountHide, home+"/.netrc") || hasMount(pl, MountWritable, home) {
		t.Errorf("T1 home read mounts: %v", pl.Mounts)
	}

	_, err = lower(TierT1, profile.ReadWrite(home+"/project"))
	ge, ok := errors.AsType[*profile.GapError](err)
	if !ok || !ge.Has(profile.GapTrustHandoff) || ge.Has(profile.GapSecrets) {
		t.Fatalf("T1 writable tree: %v, want the trust-handoff gap alone", err)
	}
	if d := ge.Parts[0].Detail; !strings.Contains(d, ".git/commondir") || !strings.Contains(d, "git init") {
		t.Errorf("T1 trust-handoff detail %q does not name what stays open", d)
	}

	_, err = lower(TierT1, profile.ReadWrite(home))
	ge, _ = errors.AsType[*profile.GapError](err)
	if ge == nil || !ge.Has(profile.GapSecrets) {
		t.Fatalf("T1 writable home: %v, want a secrets part", err)
	}
	for _, p := range ge.Parts {
		if p.Gap == profile.GapSecrets && !strings.Contains(p.Detail, "does not exist") {
			t.Errorf("T1 writable home secrets detail %q", p.Detail)
		}
	}
	if pl, _ := lower(TierT2, profile.Read(home)); len(pl.Mounts) != 0 {
		t.Errorf("a T2 plan has mounts: %v", pl.Mounts)
	}
}

func hasGap(err error, g profile.Gap) bool {
	ge, ok := errors.AsType[*profile.GapError](err)
	return ok && ge.Has(g)
}

func hasMount(pl *Plan, k MountKind, p string) bool {
	for _, m := range pl.Mounts {
		if m.Kind == k && m.Path == p {
			return true
		}
	}
	return false
}

// TestT1RootSeccomp: root is refused chmod, chown and extended
// attributes at T2 only (at T1 the read-only mounts answer them, and the
// run holds nothing on a host mount it can write: Plan.RootMetadata,
// TestT1RootMetadataHostFiles), a set-ID bit, a set-ID file or node and
// an inode flag at both tiers. On a kernel that lets an anonymous inode's
// mode change (AnonInodeSetattr: before Linux 6.15) T1 refuses as T2
// does (TestRTRootMetaAnonInode).
func TestT1RootSeccomp(t *testing.T) {
	pol, err := profile.New(profile.BaseV1, profile.ReadWrite("/srv"), profile.Waive(profile.TrustHandoff))
	if err != nil {
		t.Fatal(err)
	}
	decide := func(pl *Plan, call string, args ...uint64) bool {
		a := Access{Op: OpSyscall, Syscall: call, Arch: ArchAMD64}
		copy(a.Args[:], args)
		d, err := pl.Decide(a)
		if err != nil {
			t.Fatal(err)
		}
		return d.Allowed
	}
	for _, k := range []struct {
		tier Tier
		anon bool
	}{{TierT1, false}, {TierT2, false}, {TierT1, true}} {
		tier := k.tier
		pl, err := Lower(pol, Env{Env: profile.Env{Home: "/root"}, Root: true, Tier: tier, AnonInodeSetattr: k.anon})
		if err != nil {
			t.Fatal(err)
		}
		t1 := tier == TierT1 && !k.anon
		if pl.RootMetadata() != t1 {
			t.Errorf("%s root (anonymous inode setattr %v): RootMetadata %v", tier, k.anon, pl.RootMetadata())
		}
		for _, c := range []struct {
			call string
			args []uint64
			want bool
		}{
			{"chmod", []uint64{0, 0o755}, t1}, {"fchmod", []uint64{3, 0o644}, t1}, {"fchmodat", []uint64{0xffffff9c, 0, 0o755}, t1},
			{"fchmodat2", []uint64{0xffffff9c, 0, 0o755}, t1}, {"chown", []uint64{0, 0, 0}, t1}, {"fchownat", []uint64{0, 0, 0, 0}, t1},
			{"chmod", []uint64{0, 0o4755}, false}, {"fchmod", []uint64{3, 0o2755}, false}, {"fchmodat", []uint64{0, 0, 0o4755}, false},
			{"fchmodat2", []uint64{0, 0, 0o6755}, false}, {"openat", []uint64{0, 0, 0o101, 0o4755}, false}, {"open", []uint64{0, 0o101, 0o2755}, false},
			{"creat", []uint64{0, 0o4755}, false}, {"mknod", []uint64{0, 0o104755}, false}, {"mknodat", []uint64{0, 0, 0o104755}, false},
			{"setxattr", nil, t1}, {"lsetxattr", nil, t1}, {"fsetxattr", nil, t1}, {"removexattr", nil, t1},
			{"ioctl", []uint64{3, 0x40086602}, false},
		} {
			if got := decide(pl, c.call, c.args...); got != c.want {
				t.Errorf("%s root (anonymous inode setattr %v) %s%v allowed = %v, want %v", tier, k.anon, c.call, c.args, got, c.want)
			}
		}
	}
}

// TestT1Decide: at T1 explain answers as the mounts do: a file beneath a
// hidden store is missing (ENOENT), the store itself reads as empty, a
// write into it is EROFS, and a write outside the writable trees is EROFS
// (the read-only mount answers before Landlock).
func TestT1Decide(t *testing.T) {
	const home = "/home/alice"
	pol, err := profile.New(profile.BaseV1, profile.Read(home), profile.ReadWrite("/srv"), profile.Waive(profile.TrustHandoff))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Lower(pol, Env{Env: profile.Env{Home: home}, Tier: TierT1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		op, path string
		allowed  bool
		errno    Errno
	}{
		{"read", home + "/.ssh/id_rsa", false, ENOENT},
		{"list", home + "/.ssh", true, 0},
		{"read", home + "/.netrc", true, 0},
		{"create", home + "/.ssh/new", false, EROFS},
		{"read", home + "/notes", true, 0},
		{"write", "/etc/passwd", false, EROFS},
		{"write", "/srv/out", true, 0},
	} {
		a, err := ParseAccess(c.op, c.path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := pl.Decide(a)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != c.allowed || !d.Allowed && d.Errno != c.errno {
			t.Errorf("%s %s: %s; want allowed %v errno %s", c.op, c.path, d, c.allowed, c.errno)
		}
	}
}
