package tests

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// The tier T1 canaries: what the mounts close (git payload, the .git
// rename trick, stores under a home read, root's metadata changes outside
// the writable trees) and what stays the trust-handoff gap (a new name in
// .git). Each runs in a real T1 cage (Landlock and seccomp on top), as
// root and as nobody.

// requireT1 fails unless this host gives a cage tier T1.
func requireT1(t *testing.T) {
	t.Helper()
	requireCage(t)
	testenv.RequireUserNamespace(t)
	if r := cage.Probe(); r.Tier != "T1" {
		t.Fatalf("tier %s here: %v", r.Tier, r.T1)
	}
}

// t1Results runs a script of `try NAME CMD` lines in c and returns each
// name's "ok" or "FAIL <output>".
func t1Results(t *testing.T, c *cage.Cage, dir, script string) map[string]string {
	t.Helper()
	return t1ResultsIn(t, c, "", dir, script)
}

// t1ResultsIn is t1Results with the run's working directory wd ("": the
// test's own), which decides whether a private /tmp is mounted.
func t1ResultsIn(t *testing.T, c *cage.Cage, wd, dir, script string) map[string]string {
	t.Helper()
	sh := `cd ` + dir + ` || exit 9
try() { if out=$(eval "$2" 2>&1); then echo "$1: ok"; else echo "$1: FAIL $out" | tr '\n' ' '; echo; fi; }
` + script
	o, e, err := runIn(t, c, wd, "/bin/sh", "-c", sh)
	if err != nil {
		t.Fatalf("script: %v (stdout %q, stderr %q)", err, o, e)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(o), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		got[k] = v
	}
	return got
}

// want checks got[name] against "ok" or a failure whose output holds msg.
func want(t *testing.T, got map[string]string, name, msg string) {
	t.Helper()
	v, ok := got[name]
	switch {
	case !ok:
		t.Errorf("%s: no result", name)
	case msg == "ok" && v != "ok":
		t.Errorf("%s: %q, want it to work", name, v)
	case msg != "ok" && (!strings.HasPrefix(v, "FAIL") || !strings.Contains(v, msg)):
		t.Errorf("%s: %q, want a failure with %q", name, v, msg)
	}
}

// TestT1GitCanaries: in a writable tree at T1 the git directory's payload
// is read-only and .git (and an ancestor of it) cannot be renamed, while
// git's data stays writable; creating a new name in .git (commondir)
// works unless the new-names supervisor runs, which is why trust handoff
// stays a gap accepted by name without it.
func TestT1GitCanaries(t *testing.T) {
	requireT1(t)
	w := tempHome(t)
	for _, d := range []string{"sub/.git/hooks", "sub/.git/objects", "sub/.git/refs/heads", "sub/.git/info"} {
		if err := os.MkdirAll(filepath.Join(w, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, s := range map[string]string{"sub/.git/HEAD": "ref: refs/heads/main\n", "sub/.git/config": "[core]\n\trepositoryformatversion = 0\n", "sub/.git/info/attributes": ""} {
		if err := os.WriteFile(filepath.Join(w, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Without the gap accepted, a writable tree is refused at T1 too,
	// unless the new-names supervisor runs (TestT1NewNamesCanaries).
	supervised := cage.Probe().NewNames == nil
	if _, err := cage.New(policy(t, profile.Fork(), profile.ReadWrite(w)), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t))); supervised && err != nil ||
		!supervised && (err == nil || !strings.Contains(err.Error(), string(profile.GapTrustHandoff))) {
		t.Fatalf("New without the gap accepted (supervised %v): %v", supervised, err)
	}
	c := newCage(t, policy(t, profile.Fork(), profile.ReadWrite(w), profile.AcceptGaps(profile.GapTrustHandoff)),
		cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	got := t1Results(t, c, w, `
try hook 'echo evil > sub/.git/hooks/pre-commit'
try config 'echo evil >> sub/.git/config'
try config-replace 'echo evil > sub/.git/config.new && mv sub/.git/config.new sub/.git/config'
try attributes 'echo evil >> sub/.git/info/attributes'
try rename-git 'mv sub/.git sub/g2'
try rename-ancestor 'mv sub sub2'
try objects 'echo x > sub/.git/objects/o'
try head 'echo "ref: refs/heads/other" > sub/.git/HEAD'
try commondir 'echo ../../evil > sub/.git/commondir'
try tree 'echo x > file'
`)
	want(t, got, "hook", "Read-only file system")
	want(t, got, "config", "Read-only file system")
	if supervised {
		want(t, got, "config-replace", "Operation not permitted") // the supervisor's deny list answers first
	} else {
		want(t, got, "config-replace", "busy")
	}
	want(t, got, "attributes", "Read-only file system")
	want(t, got, "rename-git", "busy")
	want(t, got, "rename-ancestor", "busy")
	want(t, got, "objects", "ok")
	want(t, got, "head", "ok")
	want(t, got, "tree", "ok")
	// A new name no mount covers: the gap, unless the supervisor refuses it.
	if supervised {
		want(t, got, "commondir", "Operation not permitted")
	} else {
		want(t, got, "commondir", "ok")
	}
	if _, err := os.Stat(filepath.Join(w, "sub/.git/hooks/pre-commit")); err == nil {
		t.Error("the hook exists on the host")
	}
	if b, _ := os.ReadFile(filepath.Join(w, "sub/.git/config")); strings.Contains(string(b), "evil") {
		t.Errorf("the config changed on the host: %q", b)
	}
}

// TestT1GitWorkflow: git status, add, commit and log work in a T1 cage on
// a real repository while its hooks stay immutable.
func TestT1GitWorkflow(t *testing.T) {
	requireT1(t)
	git := "/usr/bin/git"
	w := tempHome(t)
	if out, err := outside(git, "init", "-q", w); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	c := newCage(t, policy(t, append(trustOpts(), profile.Fork(), profile.ReadWrite(w))...),
		cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	g := git + " -c user.name=cage -c user.email=cage@example.invalid"
	got := t1Results(t, c, w, `export HOME=`+w+`
try status '`+g+` status --short'
try add 'echo hello > a.txt && `+g+` add a.txt'
try commit '`+g+` commit -q -m first'
try log '`+g+` log --oneline | grep -q first'
try hook 'echo "#!/bin/sh" > .git/hooks/post-commit && chmod +x .git/hooks/post-commit'
try branch '`+g+` branch topic && `+g+` checkout -q topic && echo b > b.txt && `+g+` add b.txt && `+g+` commit -q -m second && `+g+` checkout -q - && `+g+` branch -D topic'
try gc '`+g+` gc -q && `+g+` log --oneline | grep -q first'
`)
	for _, k := range []string{"status", "add", "commit", "log", "branch", "gc"} {
		want(t, got, k, "ok")
	}
	want(t, got, "hook", "Read-only file system")
}

// TestT1HomeRead: reading the home directory at T1 needs no gap; its
// stores are empty (a directory lists nothing, a file reads as empty),
// its other files read, and the host's stores are untouched.
func TestT1HomeRead(t *testing.T) {
	requireT1(t)
	h := tempHome(t)
	for name, s := range map[string]string{".ssh/id_ed25519": "SECRET", ".netrc": "SECRET", ".config/gh/hosts.yml": "SECRET", "notes.txt": "notes"} {
		p := filepath.Join(h, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := newCage(t, policy(t, profile.Fork(), profile.Read(h)), cage.WithLinuxTier(cage.TierT1), cage.WithHome(h))
	o, e, err := run(t, c, "/bin/sh", "-c", "cat "+h+"/notes.txt; echo; ls -A "+h+"/.ssh "+h+"/.config/gh; cat "+h+"/.netrc; cat "+h+"/.ssh/id_ed25519")
	if strings.Contains(o, "SECRET") || strings.Contains(e, "SECRET") {
		t.Fatalf("a secret was read: stdout %q stderr %q", o, e)
	}
	if !strings.HasPrefix(o, "notes\n") || err == nil || !strings.Contains(e, "No such file or directory") {
		t.Errorf("stdout %q, stderr %q, err %v; want notes, empty stores and the key missing", o, e, err)
	}
	if b, _ := os.ReadFile(filepath.Join(h, ".ssh/id_ed25519")); string(b) != "SECRET" {
		t.Errorf("the host's key reads %q", b)
	}
}

// TestT1Metadata: at T1 mode, owner and time changes outside the writable
// trees fail with EROFS, for root too (seccomp refuses root's chmod,
// chown and xattrs at T2 only: at T1 nothing the run holds is on a host
// mount it can write, TestT1RootMetadataHostFiles), while inside them the
// workloads that need them work, as root and as nobody: gcc's 0644 output
// made executable by make, tar x restoring modes and the caller's own
// owner, gzip, chmod +x, python3 -m venv, a user xattr. Set-ID bits stay
// refused everywhere; root holds no capability in the run, so a chown to
// another owner (tar x of another user's files keeps going, reporting it)
// and a file capability (security.capability, which the host would
// honour) are refused.
func TestT1Metadata(t *testing.T) {
	requireT1(t)
	w, outsideDir := tempHome(t), tempHome(t)
	victim := filepath.Join(outsideDir, "victim")
	if err := os.WriteFile(victim, []byte("v"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := outside("/bin/sh", "-c", "cd "+w+" && mkdir src && echo data > src/d && chmod 0751 src && chmod 0640 src/d && tar czf src.tgz src && "+
		"tar czf other.tgz --owner=4242 --group=4242 src && rm -r src"); err != nil {
		t.Fatalf("making the tarballs: %v %s", err, out)
	}
	c := newCage(t, policy(t, append(trustOpts(), profile.Fork(), profile.ReadWrite(w), profile.Exec(w), profile.Read("/usr/include"), profile.Read(outsideDir))...),
		cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	got := t1Results(t, c, w, `export TMPDIR=`+w+`
try outside-chmod 'chmod 600 `+victim+`'
try outside-chown 'chown $(id -u):$(id -g) `+victim+`'
try outside-touch 'touch -m `+victim+`'
printf 'int main(void){return 0;}\n' > m.c
printf 'm: m.c\n\tgcc -o m m.c\n' > Makefile
try make 'make -s && ./m && test -x m'
try tar 'tar xzf src.tgz && test "$(stat -c %a src src/d)" = "751
640"'
try tar-owner 'mkdir o && cd o && tar xzf ../other.tgz'
try gzip 'gzip -k src/d && gunzip -c src/d.gz | grep -q data && rm src/d && gunzip src/d.gz && test "$(stat -c %a src/d)" = 640'
try chmod-x 'echo "#!/bin/sh" > s && chmod +x s && ./s'
try chown-own 'chown $(id -u):$(id -g) s'
try venv '/usr/bin/python3 -m venv --without-pip venv && test -x venv/bin/python3'
try setuid 'chmod u+s s'
try setgid-create '/usr/bin/python3 -c "import os; os.close(os.open(\"sg\", os.O_CREAT|os.O_WRONLY, 0o2755))"'
try setuid-mknod '/usr/bin/python3 -c "import os; os.mknod(\"su\", 0o104755)"'
try xattr '/usr/bin/python3 -c "import os; os.setxattr(\"s\", \"user.procage\", b\"x\")"'
try fcap '/usr/bin/python3 -c "import os; os.setxattr(\"s\", \"security.capability\", bytes([0,0,0,2, 0,0x20,0,0, 0,0,0,0, 0,0,0,0, 0,0,0,0]))"'
`)
	for k, v := range got {
		t.Logf("%s: %s", k, v)
	}
	want(t, got, "outside-touch", "Read-only file system")
	refusedRO := "Read-only file system"
	if os.Geteuid() == 0 && !rootMetaLifted() {
		refusedRO = "Operation not permitted" // seccomp answers first
	}
	for _, k := range []string{"outside-chmod", "outside-chown"} {
		want(t, got, k, refusedRO)
	}
	if os.Geteuid() == 0 && !rootMetaLifted() {
		// Root's metadata calls stay refused on this kernel (rootMetaLifted).
		for _, k := range []string{"chmod-x", "chown-own", "xattr"} {
			want(t, got, k, "Operation not permitted")
		}
	} else {
		for _, k := range []string{"make", "tar", "gzip", "chmod-x", "chown-own", "venv"} {
			want(t, got, k, "ok")
		}
		// A user xattr works in the cage wherever the tree's file system
		// takes one outside it (tmpfs before Linux 6.6 does not: the
		// kernel matrix).
		probe := filepath.Join(w, "xattr-probe")
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := unix.Setxattr(probe, "user.procage", []byte("x"), 0); errors.Is(err, unix.EOPNOTSUPP) {
			want(t, got, "xattr", "Operation not supported")
		} else if err != nil {
			t.Fatalf("user xattr outside the cage: %v", err)
		} else {
			want(t, got, "xattr", "ok")
		}
	}
	if rootMetaLifted() {
		// No CAP_CHOWN: GNU tar as root restores owners, reports each it
		// cannot and exits 2 (--no-same-owner keeps the caller's).
		want(t, got, "tar-owner", "Cannot change ownership to uid 4242")
	}
	want(t, got, "setuid", "Operation not permitted")
	want(t, got, "setgid-create", "Operation not permitted")
	want(t, got, "setuid-mknod", "Operation not permitted")
	want(t, got, "fcap", "Operation not permitted")
	if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the outside file: %v, %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(filepath.Join(w, "o/src/d")); (os.Geteuid() != 0 || rootMetaLifted()) && (err != nil || fi.Mode().Perm() != 0o640) {
		t.Errorf("tar x of another owner's files: %v, %v; want the file with its mode", fi, err)
	}
}
