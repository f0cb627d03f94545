package seatbelt_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
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
		// A bare repository needs HEAD, objects/ and refs/; the config
		// names a worktree so fsmonitor runs. Only HEAD is refused (the
		// other names are too common to deny), which is enough.
		{"bare repository in a subdirectory", func(marker string) ([]string, func()) {
			repo := newRepo("r5")
			bare := filepath.Join(repo, "sub")
			write(filepath.Join(bare, "objects", "info", "x"), "", 0o644)
			write(filepath.Join(bare, "refs", "heads", "x"), "", 0o644)
			write(filepath.Join(bare, "config"), evilConfig(marker)+"\tworktree = "+bare+"\n", 0o644)
			p := filepath.Join(bare, "HEAD")
			write(p, "ref: refs/heads/main\n", 0o644)
			return []string{p}, func() { trigger(bare, "status") }
		}},
		{"bare repository at the root, spoiled .git HEAD", func(marker string) ([]string, func()) {
			repo := newRepo("r6")
			// .git/HEAD is carved out (checkout writes it): garbage there
			// makes git pass over .git and take the root for a bare repository.
			write(filepath.Join(repo, ".git", "HEAD"), "spoiled\n", 0o644)
			write(filepath.Join(repo, "objects", "info", "x"), "", 0o644)
			write(filepath.Join(repo, "refs", "heads", "x"), "", 0o644)
			write(filepath.Join(repo, "config"), evilConfig(marker)+"\tworktree = "+repo+"\n", 0o644)
			p := filepath.Join(repo, "HEAD")
			write(p, "ref: refs/heads/main\n", 0o644)
			return []string{p}, func() { trigger(repo, "status") }
		}},
		{"git directory in refs behind a link", func(marker string) ([]string, func()) {
			repo := newRepo("r7")
			built := filepath.Join(repo, ".git", "refs", "x")
			write(filepath.Join(built, "objects", "x"), "", 0o644)
			write(filepath.Join(built, "refs", "x"), "", 0o644)
			write(filepath.Join(built, "HEAD"), "ref: refs/heads/main\n", 0o644)
			p := filepath.Join(built, "config")
			write(p, evilConfig(marker)+"\tworktree = "+repo+"\n", 0o644)
			src := filepath.Join(repo, "src")
			if err := os.Symlink(built, src); err != nil {
				t.Fatal(err)
			}
			return []string{p}, func() { trigger(src, "status") }
		}},
	}
	p, err := profile.New(profile.BaseV1, profile.ReadWrite(root))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := seatbelt.Lower(p, profile.Env{Home: "/Users/alice"})
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
					if d.Allowed || d.Layer != seatbelt.LayerHardDeny {
						t.Errorf("%s %s: %s, want denied by the trust-handoff class", op, w, d)
					}
				}
			}
		})
	}
}

// TestGitDirCarriedOutRunsPayload checks with real git that a directory
// built inside .git/objects (where the carve-out lets the child write a
// nested .git) and renamed into the worktree makes git run a program, and
// that the profile refuses both the config and the rename (the move of a
// directory inside a .git). TestCanaryGitDirCarriedOut covers the rules everywhere.
func TestGitDirCarriedOutRunsPayload(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed; TestCanaryGitDirCarriedOut covers the rules")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+root, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@b", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@b")
	git := func(dir string, args ...string) error {
		cmd := exec.Command(gitPath, args...)
		cmd.Dir, cmd.Env = dir, env
		return cmd.Run()
	}
	repo := filepath.Join(root, "repo")
	if err := git(root, "init", "-q", repo); err != nil {
		t.Fatal(err)
	}
	if err := git(repo, "commit", "-q", "--allow-empty", "-m", "init"); err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(repo, ".git", "objects", "t")
	marker := filepath.Join(root, "pwned")
	for _, d := range []string{".git/objects", ".git/refs"} {
		if err := os.MkdirAll(filepath.Join(built, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		".git/HEAD":   "ref: refs/heads/main\n",
		".git/config": "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch " + marker + "; false\"\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(built, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(repo, "src")
	if err := os.Rename(built, src); err != nil {
		t.Fatal(err)
	}
	_ = git(src, "status") // the payload fails the command on purpose
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the route did not run its payload with this git (%v); the canary no longer shows the escape", err)
	}
	p, err := profile.New(profile.BaseV1, profile.ReadWrite(root))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := seatbelt.Lower(p, profile.Env{Home: "/Users/alice"})
	if err != nil {
		t.Fatal(err)
	}
	// Both steps are refused: the config (a payload name, refused in the
	// carve-out too) and the move.
	for _, a := range []sim.Access{
		{Op: "file-write-create", Path: filepath.Join(built, ".git", "config")},
		{Op: "file-write-unlink", Path: built, VnodeType: "DIRECTORY"},
	} {
		d, err := sim.Decide(plan.Profile, a)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed || d.Layer != seatbelt.LayerHardDeny {
			t.Errorf("%s: %s, want denied by the trust-handoff class", a, d)
		}
	}
}
