package tests

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/hardwalk"
	"github.com/procage-go/procage/profile"
)

const secretText = "PROCAGE-SECRET"

// TestLinuxHardDenyTable walks the hard-deny table: for every protected
// entry of every class, a grant of the entry, of a directory beneath it,
// of its parent and of the home directory, given as a policy rule and as
// a spawn's grant, either is refused with a gap naming the entry or lets
// no caged cat read (secrets) or tee write (trust handoff) the entry's
// file. A class's table entry the Linux lowering ignored would fail here.
func TestLinuxHardDenyTable(t *testing.T) {
	requireCage(t)
	home := tempHome(t)
	env := profile.Env{Home: home, ZDotDir: filepath.Join(home, "zdot"), XDGConfigHome: filepath.Join(home, "xdg")}
	t.Setenv("ZDOTDIR", env.ZDotDir)
	t.Setenv("XDG_CONFIG_HOME", env.XDGConfigHome)
	cases := hardwalk.Cases("linux", env, filepath.Join(home, "proj"))
	if len(cases) < 60 {
		t.Fatalf("only %d table entries placed", len(cases))
	}
	for _, c := range cases {
		for _, d := range c.Dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for _, f := range c.Files {
			if err := os.WriteFile(f, []byte(secretText), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range cases {
		write := c.Entry.Protect&profile.ProtectRead == 0
		for _, g := range c.Grants {
			for _, how := range []string{"policy", "grant"} {
				name := string(c.Entry.Class) + " " + c.Path + " by " + how + " of " + g.Name
				checkProtected(t, name, c, g, how == "grant", write)
			}
		}
	}
}

func checkProtected(t *testing.T, name string, c hardwalk.Case, g hardwalk.Grant, spawnGrant, write bool) {
	t.Helper()
	var opts []profile.Option
	switch {
	case spawnGrant:
	case write && g.Dir:
		opts = append(opts, profile.ReadWrite(g.Path))
	case write:
		opts = append(opts, profile.FS(profile.AccessRead|profile.AccessWrite, profile.Literal, g.Path))
	case g.Dir:
		opts = append(opts, profile.Read(g.Path))
	default:
		opts = append(opts, profile.FS(profile.AccessRead, profile.Literal, g.Path))
	}
	// The other class stays in force, so that a gap it names is not
	// taken for this entry's.
	pol := policy(t, opts...)
	cg, err := cage.New(pol, cage.WithLinuxTier(cage.TierT2), cage.WithHome(homeOf(c)))
	skipIfTooOld(t, err) // ends the walk: no policy without a gap runs
	if refusedNaming(t, name, err, c) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var cmd *cage.Cmd
	if write {
		cmd = cg.Command(ctx, "/usr/bin/tee", "-a", g.File)
		cmd.Stdin = strings.NewReader("planted")
	} else {
		cmd = cg.Command(ctx, "/bin/cat", g.File)
	}
	if spawnGrant {
		cmd.Grants = []cage.Grant{{Path: g.Path, Write: write}}
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if refusedNaming(t, name, err, c) {
		return
	}
	b, rerr := os.ReadFile(g.File)
	switch {
	case rerr != nil:
		t.Errorf("%s: %v", name, rerr)
	case err == nil:
		t.Errorf("%s: the caged command succeeded (stdout %q)", name, out.String())
	case strings.Contains(out.String(), secretText) || string(b) != secretText:
		t.Errorf("%s: the cage reached the file: stdout %q, file now %q", name, out.String(), b)
	}
}

// homeOf is the home directory the case was placed in.
func homeOf(c hardwalk.Case) string { return c.Grants[len(c.Grants)-1].Path }

// refusedNaming reports whether err refuses the policy with a gap naming
// the case's entry; any other error fails the test.
func refusedNaming(t *testing.T, name string, err error, c hardwalk.Case) bool {
	t.Helper()
	if err == nil {
		return false
	}
	ge, ok := errors.AsType[*profile.GapError](err)
	if !ok {
		var ee interface{ ExitCode() int }
		if errors.As(err, &ee) {
			return false // the command ran and failed: checked by the caller
		}
		t.Errorf("%s: %v, want a gap or a denied access", name, err)
		return true
	}
	want := c.Entry.Path
	if c.Entry.Anchor == profile.AnchorAnyTree {
		want = c.Entry.Name
	} else if c.Entry.Prefix {
		want += "*"
	}
	for _, p := range ge.Parts {
		if p.Class == c.Entry.Class && slices.Contains(p.Protected, want) {
			return true
		}
	}
	t.Errorf("%s: refused, but no part names %s: %v", name, want, ge.Parts)
	return true
}
