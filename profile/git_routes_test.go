package profile_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sim"
)

// TestGitRoutesRunPayloads checks with real git that each route R-31
// names makes git run a program (the escape is real), and that the
// lowered profile refuses every file the attacker writes for it (in a
// tree the policy lets the child write). It needs git; the simulator
// canaries (TestCanaryGitHandoff) run everywhere.
func TestGitRoutesRunPayloads(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed; TestCanaryGitHandoff covers the rules")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(gitPath, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
	}
	trigger := func(dir string, args ...string) {
		cmd := exec.Command(gitPath, args...)
		cmd.Dir, cmd.Env = dir, env
		_ = cmd.Run() // the payload fails the command on purpose
	}
	write := func(p, data string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), mode); err != nil {
			t.Fatal(err)
		}
	}
	copyGitDir := func(from, to string) {
		t.Helper()
		if out, err := exec.Command("cp", "-R", from, to).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, out)
		}
	}
	// evilConfig is a git config whose fsmonitor hook leaves marker.
	evilConfig := func(marker string) string {
		return "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch " + marker + "; false\"\n"
	}
	newRepo := func(name string) string {
		dir := filepath.Join(root, name)
		git(root, "init", "-q", dir)
		git(dir, "commit", "-q", "--allow-empty", "-m", "init")
		return dir
	}

	routes := []struct {
		name    string
		prepare func(marker string) (written []string, run func())
	}{
		{"commondir", func(marker string) ([]string, func()) {
			repo := newRepo("r1")
			evil := filepath.Join(root, "evil1")
			copyGitDir(filepath.Join(repo, ".git"), evil)
			write(filepath.Join(evil, "config"), evilConfig(marker), 0o644)
			p := filepath.Join(repo, ".git", "commondir")
			write(p, evil+"\n", 0o644)
			return []string{p}, func() { trigger(repo, "status") }
		}},
		{"gitdir file", func(marker string) ([]string, func()) {
			repo := newRepo("r2")
			evil := filepath.Join(root, "evil2")
			copyGitDir(filepath.Join(repo, ".git"), evil)
			write(filepath.Join(evil, "config"), evilConfig(marker), 0o644)
			p := filepath.Join(root, "plain", ".git")
			write(p, "gitdir: "+evil+"\n", 0o644)
			return []string{p}, func() { trigger(filepath.Join(root, "plain"), "status") }
		}},
		{"submodule hook", func(marker string) ([]string, func()) {
			sub := newRepo("s3")
			sup := newRepo("r3")
			git(sup, "-c", "protocol.file.allow=always", "submodule", "-q", "add", sub, "sub")
			p := filepath.Join(sup, ".git", "modules", "sub", "hooks", "pre-commit")
			write(p, "#!/bin/sh\ntouch "+marker+"\n", 0o755)
			return []string{p}, func() { trigger(filepath.Join(sup, "sub"), "commit", "-q", "--allow-empty", "-m", "x") }
		}},
		{"worktree commondir", func(marker string) ([]string, func()) {
			repo := newRepo("r4")
			wt := filepath.Join(root, "wt4")
			git(repo, "worktree", "add", "-q", wt)
			evil := filepath.Join(root, "evil4")
			copyGitDir(filepath.Join(repo, ".git"), evil)
			if err := os.RemoveAll(filepath.Join(evil, "worktrees")); err != nil {
				t.Fatal(err)
			}
			write(filepath.Join(evil, "config"), evilConfig(marker), 0o644)
			p := filepath.Join(repo, ".git", "worktrees", filepath.Base(wt), "commondir")
			write(p, evil+"\n", 0o644)
			return []string{p}, func() { trigger(wt, "status") }
		}},
	}
	p, err := profile.New(profile.BaseV1, profile.ReadWrite(root))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := profile.Lower(p, profile.Env{Home: "/Users/alice"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range routes {
		t.Run(r.name, func(t *testing.T) {
			marker := filepath.Join(root, "pwned-"+strings.ReplaceAll(r.name, " ", "-"))
			written, run := r.prepare(marker)
			run()
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("the route did not run its payload with this git (%v); the canary no longer shows the escape", err)
			}
			for _, w := range written {
				for _, op := range []string{"file-write-create", "file-write-data"} {
					d, err := sim.Decide(plan.Profile, sim.Access{Op: op, Path: w})
					if err != nil {
						t.Fatal(err)
					}
					if d.Allowed || d.Layer != profile.LayerHardDeny {
						t.Errorf("%s %s: %s, want denied by the trust-handoff class", op, w, d)
					}
				}
			}
		})
	}
}
