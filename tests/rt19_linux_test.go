package tests

// Red-team canaries for the one hard-deny table (issue 19). Each test
// fails while its escape is open: a caged process reads a protected
// secret or writes a trust-handoff file with no gap accepted and no class
// waived. None accepts a gap; a *GapError refusing the policy counts as
// held.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

const rt19Secret = "RT19-SECRET"

// rt19File writes a world-writable file (so the test also runs as nobody)
// and its directories.
func rt19File(t *testing.T, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(p, 0o666)
}

// rt19Home is a stand-in home every user can write.
func rt19Home(t *testing.T) string {
	t.Helper()
	h := tempHome(t)
	if err := os.Chmod(h, 0o777); err != nil {
		t.Fatal(err)
	}
	return h
}

// rt19Run runs name in a cage of pol (home h), with grants, and reports
// whether the cage held: the policy was refused with a *GapError, or the
// command failed and did not print the secret. write: the command tries
// to append to file, which must then still hold want.
func rt19Run(t *testing.T, what, h string, pol profile.Policy, grants []cage.Grant, file string, write bool) {
	t.Helper()
	c, err := cage.New(pol, cage.WithLinuxTier(cage.TierT2), cage.WithHome(h))
	if _, ok := errors.AsType[*profile.GapError](err); ok {
		return // refused by name: held
	} else if err != nil {
		skipIfTooOld(t, err)
		t.Fatalf("%s: cage.New: %v", what, err)
	}
	before, _ := os.ReadFile(file)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cmd *cage.Cmd
	if write {
		cmd = c.Command(ctx, "/usr/bin/tee", "-a", file)
		cmd.Stdin = strings.NewReader("\nplanted-by-cage\n")
	} else {
		cmd = c.Command(ctx, "/bin/cat", file)
	}
	cmd.Grants = grants
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if _, ok := errors.AsType[*profile.GapError](err); ok {
		return
	}
	after, _ := os.ReadFile(file)
	switch {
	case strings.Contains(out.String(), rt19Secret):
		t.Errorf("ESCAPE %s: the caged cat printed the secret %q", what, out.String())
	case string(after) != string(before):
		t.Errorf("ESCAPE %s: the caged tee wrote the file: now %q", what, after)
	case err == nil:
		t.Errorf("ESCAPE %s: the caged command succeeded (stdout %q)", what, out.String())
	}
}

// TestLinuxRT19SymlinkedStore: dotfile managers (GNU Stow, chezmoi
// symlink mode, yadm alternates) and synced folders make ~/.aws, ~/.ssh
// or ~/.bashrc a symbolic link. The table's paths are never resolved, so
// the store's kernel spelling (what every grant is resolved to) is not
// protected: a rule or grant naming ~/.aws itself, or its target, reads
// the credentials, and a grant of ~/.bashrc writes the startup file.
func TestLinuxRT19SymlinkedStore(t *testing.T) {
	requireCage(t)
	h := rt19Home(t)
	vault := filepath.Join(h, "dotfiles")
	rt19File(t, filepath.Join(vault, "aws", "credentials"), rt19Secret)
	rt19File(t, filepath.Join(vault, "bashrc"), "# bashrc\n")
	if err := os.Symlink(filepath.Join(vault, "aws"), filepath.Join(h, ".aws")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dotfiles/bashrc", filepath.Join(h, ".bashrc")); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(h, ".aws", "credentials")
	rt19Run(t, "policy Read(~/.aws) with ~/.aws a link", h, policy(t, profile.Read(filepath.Join(h, ".aws"))), nil, creds, false)
	rt19Run(t, "policy Read(~/.aws/credentials) literal with ~/.aws a link", h,
		policy(t, profile.FS(profile.AccessRead, profile.Literal, creds)), nil, creds, false)
	rt19Run(t, "grant of ~/.aws with ~/.aws a link", h, policy(t), []cage.Grant{{Path: filepath.Join(h, ".aws")}}, creds, false)
	bashrc := filepath.Join(h, ".bashrc")
	rt19Run(t, "read-write grant of ~/.bashrc (a link)", h, policy(t), []cage.Grant{{Path: bashrc, Write: true}}, bashrc, true)
	rt19Run(t, "policy literal write of ~/.bashrc (a link)", h,
		policy(t, profile.FS(profile.AccessRead|profile.AccessWrite, profile.Literal, bashrc)), nil, bashrc, true)
}

// TestLinuxRT19LiteralDirectory: a Literal policy rule is checked as one
// file (hardDeny.apply with tree=false), but Landlock attaches a rule to
// the inode it opens, and READ_FILE/WRITE_FILE on a directory cover every
// file beneath it (include/uapi/linux/landlock.h). A literal read-write
// rule on the home directory therefore reads ~/.ssh/id_rsa and writes
// .git hooks and ~/.gitconfig, with no gap.
func TestLinuxRT19LiteralDirectory(t *testing.T) {
	requireCage(t)
	h := rt19Home(t)
	key := filepath.Join(h, ".ssh", "id_rsa")
	hook := filepath.Join(h, "proj", ".git", "hooks", "pre-commit")
	gitconfig := filepath.Join(h, ".gitconfig")
	rt19File(t, key, rt19Secret)
	rt19File(t, hook, "#!/bin/sh\n")
	rt19File(t, gitconfig, "[user]\n")
	// Refused at New: the rule means the directory alone, which Landlock
	// cannot express.
	for _, pol := range []profile.Policy{
		policy(t, profile.FS(profile.AccessRead|profile.AccessWrite, profile.Literal, h)),
		policy(t, profile.FS(profile.AccessRead, profile.Literal, "/")),
	} {
		_, err := cage.New(pol, cage.WithLinuxTier(cage.TierT2), cage.WithHome(h))
		if pe, ok := errors.AsType[*cage.PolicyError](err); !ok || pe.Kind != cage.ErrLiteralDirectory || strings.Count(err.Error(), "cage: ") != 1 {
			skipIfTooOld(t, err) // New refuses the kernel before it opens the rules
			t.Errorf("%v: cage.New = %v, want a *cage.PolicyError of kind ErrLiteralDirectory", pol, err)
		}
	}
	// A file grant that is a directory by Start is refused the same way.
	c := newCage(t, policy(t), cage.WithHome(h))
	cmd := c.Command(context.Background(), "/bin/cat", key)
	cmd.Grants = []cage.Grant{{Path: filepath.Join(h, ".ssh")}}
	out, _ := cmd.Output()
	if strings.Contains(string(out), rt19Secret) {
		t.Errorf("a grant of ~/.ssh printed the key")
	}
	_, _ = hook, gitconfig
}

// TestLinuxRT19XDGConfigHome: the trust-handoff class follows
// $XDG_CONFIG_HOME for git, fish and zsh, but the secrets class and the
// Linux-only entries do not. The GitHub CLI keeps its token in
// $XDG_CONFIG_HOME/gh/hosts.yml when the variable is set (`gh help
// environment`), systemd starts user units from
// $XDG_CONFIG_HOME/systemd/user (systemd.unit(5)).
func TestLinuxRT19XDGConfigHome(t *testing.T) {
	requireCage(t)
	h := rt19Home(t)
	xdg := filepath.Join(h, "xdg")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	hosts := filepath.Join(xdg, "gh", "hosts.yml")
	unit := filepath.Join(xdg, "systemd", "user", "sync.service")
	rt19File(t, hosts, "oauth_token: "+rt19Secret)
	rt19File(t, unit, "[Service]\n")
	rt19Run(t, "policy Read($XDG_CONFIG_HOME/gh)", h, policy(t, profile.Read(filepath.Dir(hosts))), nil, hosts, false)
	rt19Run(t, "grant of $XDG_CONFIG_HOME/gh/hosts.yml", h, policy(t), []cage.Grant{{Path: hosts}}, hosts, false)
	rt19Run(t, "read-write grant of a $XDG_CONFIG_HOME/systemd/user unit", h, policy(t), []cage.Grant{{Path: unit, Write: true}}, unit, true)
}

// TestLinuxRT19BareRepository: GitProtected knows a git directory only by
// the name .git, but a bare repository (git init --bare x.git, the "bare
// repository for dotfiles" setup at ~/.cfg) has its config and hooks at
// service's environment (LD_PRELOAD included).
func TestLinuxRT19StartupFilesMissing(t *testing.T) {
	requireCage(t)
	h := rt19Home(t)
	for _, f := range []string{".bash_aliases", ".config/environment.d/50-path.conf"} {
		p := filepath.Join(h, f)
		rt19File(t, p, "# "+f+"\n")
		rt19Run(t, "read-write grant of ~/"+f, h, policy(t), []cage.Grant{{Path: p, Write: true}}, p, true)
	}
}

// TestLinuxRT19EnvFilter: credential variables common tools document
// that the default environment filter passes to the child.
func TestLinuxRT19EnvFilter(t *testing.T) {
	requireCage(t)
	vars := map[string]string{
		"GITHUB_PAT":                "ghp_" + rt19Secret, // R remotes/usethis, gh-based tools
		"BW_SESSION":                rt19Secret,          // Bitwarden CLI `bw unlock`
		"OP_SESSION_my":             rt19Secret,          // 1Password CLI v1 sessions
		"TF_TOKEN_app_terraform_io": rt19Secret,          // Terraform CLI host credentials
		"NGROK_AUTHTOKEN":           rt19Secret,          // ngrok agent
		"npm_config__authToken":     rt19Secret,          // npm config from the environment
		"npm_config_//registry.npmjs.org/:_authToken": rt19Secret,                                          // npm per-registry token
		"SYSTEM_ACCESSTOKEN":                          rt19Secret,                                          // Azure Pipelines
		"AZURE_DEVOPS_EXT_PAT":                        rt19Secret,                                          // Azure DevOps CLI
		"CI_JOB_JWT":                                  rt19Secret,                                          // GitLab CI
		"DOCKER_AUTH_CONFIG":                          `{"auths":{"r":{"auth":"` + rt19Secret + `"}}}`,     // GitLab runner
		"GIT_CONFIG_VALUE_0":                          "Authorization: Bearer " + rt19Secret,               // git config from the environment
		"RT19_DB_URL":                                 "postgresql://app@db/x?password=" + rt19Secret,      // libpq URI query parameter
		"RT19_PG_DSN":                                 "host=db user=app password=" + rt19Secret,           // libpq keyword/value string
		"RT19_MYSQL_DSN":                              "app:" + rt19Secret + "@tcp(db:3306)/x",             // go-sql-driver/mysql DSN
		"RT19_REPO":                                   "https://ghp_" + rt19Secret + "@github.com/o/r.git", // token as the URL's user
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
	c := newCage(t, policy(t))
	out, errb, err := run(t, c, "/usr/bin/env")
	if err != nil {
		t.Fatalf("env: %v: %s", err, errb)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, rt19Secret) {
			k, _, _ := strings.Cut(line, "=")
			t.Errorf("ESCAPE the default filter passed %s to the child", k)
		}
	}
}
