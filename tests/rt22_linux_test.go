package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// Red team 22: tier T1 canaries. Each states what T1 claims
// (docs/linux-backend.md, the tier table) and checks it in a real T1
// cage, as root and as nobody.

// writeTree makes the files of m (name: content) beneath dir.
func writeTree(t *testing.T, dir string, m map[string]string) {
	t.Helper()
	for name, s := range m {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRT22ProtectStartupFiles: the plan of a writable home lists a
// "mount protect" line per trust-handoff startup file ("if it exists:
// read-only, its ancestors pinned"); the existing ones must be read-only
// in the run and their directories must not be renamable.
func TestRT22ProtectStartupFiles(t *testing.T) {
	requireT1(t)
	h := tempHome(t)
	writeTree(t, h, map[string]string{".bashrc": "orig\n", ".config/fish/config.fish": "orig\n", ".config/git/config": "orig\n", ".profile": "orig\n"})
	c := newCage(t, policy(t, profile.Fork(), profile.ReadWrite(h), profile.AcceptGaps(profile.GapTrustHandoff, profile.GapSecrets)),
		cage.WithLinuxTier(cage.TierT1), cage.WithHome(h))
	if !strings.Contains(c.Plan(), "mount protect   "+h+"/.bashrc") {
		t.Fatalf("the plan has no protect mount for .bashrc:\n%s", c.Plan())
	}
	got := t1Results(t, c, h, `
try bashrc 'echo evil >> .bashrc'
try bashrc-replace 'echo evil > b.new && mv b.new .bashrc'
try profile 'echo evil >> .profile'
try fish 'echo evil >> .config/fish/config.fish'
try gitconfig 'echo evil >> .config/git/config'
try rename-ancestor 'mv .config c2'
try other 'echo ok > notes.txt'
`)
	want(t, got, "bashrc", "Read-only file system")
	want(t, got, "bashrc-replace", "busy")
	want(t, got, "profile", "Read-only file system")
	want(t, got, "fish", "Read-only file system")
	want(t, got, "gitconfig", "Read-only file system")
	want(t, got, "rename-ancestor", "busy")
	want(t, got, "other", "ok")
	for _, name := range []string{".bashrc", ".profile", ".config/fish/config.fish", ".config/git/config"} {
		if b, _ := os.ReadFile(filepath.Join(h, name)); string(b) != "orig\n" {
			t.Errorf("%s on the host: %q", name, b)
		}
	}
}

// TestRT22PrefixStartupFiles: ~/.gitconfig is a trust-handoff prefix
// entry (.gitconfig, .gitconfig-work ...): git runs what it names
// (core.fsmonitor, core.hooksPath). An existing one in a writable home is
// a startup file the T1 gap text says is read-only.
func TestRT22PrefixStartupFiles(t *testing.T) {
	requireT1(t)
	h := tempHome(t)
	writeTree(t, h, map[string]string{".gitconfig": "orig\n", ".gitconfig-work": "orig\n"})
	c := newCage(t, policy(t, profile.Fork(), profile.ReadWrite(h), profile.AcceptGaps(profile.GapTrustHandoff, profile.GapSecrets)),
		cage.WithLinuxTier(cage.TierT1), cage.WithHome(h))
	got := t1Results(t, c, h, `
try gitconfig 'echo "[core] fsmonitor = evil" >> .gitconfig'
try gitconfig-work 'echo evil >> .gitconfig-work'
`)
	want(t, got, "gitconfig", "Read-only file system")
	want(t, got, "gitconfig-work", "Read-only file system")
}

// TestRT22SubmoduleGitDir: a submodule's git directory is
// .git/modules/<name>, and a submodule's name is its path by default, so
// "third_party/sm" has its config and hooks in
// .git/modules/third_party/sm; a nested submodule's in
// .git/modules/a/modules/b. T1 pins "each existing .git (and
// worktrees/*/, modules/*/)" with the payload read-only: these are the
// same payload.
func TestRT22SubmoduleGitDir(t *testing.T) {
	requireT1(t)
	git := "/usr/bin/git"
	requireProgram(t, git)
	w := tempHome(t)
	for _, d := range []string{"proj/.git/modules/third_party/sm/hooks", "proj/.git/modules/a/modules/b/hooks", "proj/.git/modules/a/hooks"} {
		if err := os.MkdirAll(filepath.Join(w, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := outside(git, "init", "-q", filepath.Join(w, "proj")); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	writeTree(t, w, map[string]string{
		"proj/.git/modules/third_party/sm/HEAD": "ref: refs/heads/main\n", "proj/.git/modules/third_party/sm/config": "orig\n",
		"proj/.git/modules/a/HEAD": "ref: refs/heads/main\n", "proj/.git/modules/a/config": "orig\n",
		"proj/.git/modules/a/modules/b/HEAD": "ref: refs/heads/main\n", "proj/.git/modules/a/modules/b/config": "orig\n",
	})
	c := newCage(t, policy(t, profile.Fork(), profile.ReadWrite(w), profile.AcceptGaps(profile.GapTrustHandoff)),
		cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	got := t1Results(t, c, w, `
try a-config 'echo evil >> proj/.git/modules/a/config'
try slash-config 'echo "[core] fsmonitor = evil" >> proj/.git/modules/third_party/sm/config'
try slash-hook 'echo evil > proj/.git/modules/third_party/sm/hooks/pre-commit'
try nested-config 'echo evil >> proj/.git/modules/a/modules/b/config'
try nested-hook 'echo evil > proj/.git/modules/a/modules/b/hooks/pre-commit'
`)
	for _, k := range []string{"a-config", "slash-config", "slash-hook", "nested-config", "nested-hook"} {
		want(t, got, k, "Read-only file system")
	}
}

// TestRT22HandedFdMetadata: T1 drops root's seccomp refusal of chmod
// because "everything is on a read-only mount"; a descriptor the caller
// hands over (a redirected standard output, stdin from a file) is on the
// host's read-write mount, and /proc/self/fd/N reaches it by path. T1 must
// refuse at least what T2 refuses: root's chmod of a root-owned file
// outside the writable trees (root's such stdout is copied through a
// pipe: TestT1RootMetadataHanded). (As nobody both tiers allow it on its
// own file: Landlock has no right for a mode.)
func TestRT22HandedFdMetadata(t *testing.T) {
	requireT1(t)
	dir := tempHome(t)
	res := map[cage.LinuxTier]string{}
	for _, tier := range []cage.LinuxTier{cage.TierT2, cage.TierT1} {
		victim := filepath.Join(dir, "victim-"+tier.String())
		if err := os.WriteFile(victim, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(victim, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		c := newCage(t, policy(t), cage.WithLinuxTier(tier), cage.WithHome(tempHome(t)))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := c.Command(ctx, "/bin/chmod", "600", "/proc/self/fd/1")
		var errb strings.Builder
		cmd.Stdout, cmd.Stderr = f, &errb
		err = cmd.Run()
		cancel()
		f.Close()
		fi, serr := os.Stat(victim)
		if serr != nil {
			t.Fatal(serr)
		}
		res[tier] = fi.Mode().Perm().String()
		t.Logf("%v: chmod via the handed-over stdout: %v %q; mode now %v", tier, err, errb.String(), fi.Mode().Perm())
	}
	if res[cage.TierT2] == "-rw-r--r--" && res[cage.TierT1] != "-rw-r--r--" {
		t.Errorf("T1 let the run change the mode of a host file outside the writable trees that T2 kept (%s)", res[cage.TierT1])
	}
}

// TestRT22HomeConfigLink: dotfile managers make ~/.config a link
// (~/.config -> dotfiles/config). A home read at T1 must still run, with
// the store reached through the link hidden.
func TestRT22HomeConfigLink(t *testing.T) {
	requireT1(t)
	h := tempHome(t)
	writeTree(t, h, map[string]string{"dotfiles/config/gh/hosts.yml": "SECRET", "notes.txt": "notes"})
	if err := os.Symlink("dotfiles/config", filepath.Join(h, ".config")); err != nil {
		t.Fatal(err)
	}
	c := newCage(t, policy(t, profile.Fork(), profile.Read(h)), cage.WithLinuxTier(cage.TierT1), cage.WithHome(h))
	o, e, err := run(t, c, "/bin/sh", "-c", "cat "+h+"/notes.txt; echo; cat "+h+"/.config/gh/hosts.yml "+h+"/dotfiles/config/gh/hosts.yml")
	if strings.Contains(o, "SECRET") || strings.Contains(e, "SECRET") {
		t.Fatalf("a secret was read: stdout %q stderr %q", o, e)
	}
	if !strings.HasPrefix(o, "notes\n") {
		t.Errorf("stdout %q, stderr %q, err %v; want the run to start and read notes", o, e, err)
	}
}
