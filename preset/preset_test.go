package preset_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/procage-go/procage/preset"
	"github.com/procage-go/procage/profile"
)

// fakeHost makes a home directory holding the toolchains' usual places and
// the secrets kept beside them, and returns it with an environment that
// names nothing else.
func fakeHost(t *testing.T) (string, func(string) string) {
	t.Helper()
	home := t.TempDir()
	for _, d := range []string{".nvm/versions/node/v22.1.0/bin", ".pyenv/shims", "venv/bin", ".cargo/bin", ".rustup/toolchains", "go/pkg/mod", "sdk/go1.25.0", ".local/lib/python3.12", ".config/git", "bin"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".gitconfig", ".git-credentials", ".npmrc", ".config/git/config", ".config/git/credentials", ".cargo/credentials.toml", ".config/go/env"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"PATH": filepath.Join(home, "bin"), "VIRTUAL_ENV": filepath.Join(home, "venv"), "GOROOT": "relative/is/ignored"}
	return home, func(k string) string { return env[k] }
}

func paths(rules []preset.Rule) []string {
	var ps []string
	for _, r := range rules {
		ps = append(ps, r.Path)
	}
	return ps
}

// TestRules: each preset grants exactly its toolchain's places found on
// the host, in a fixed order, never write access and never the secrets
// beside them; asking again gives the same rules.
func TestRules(t *testing.T) {
	home, getenv := fakeHost(t)
	h := func(p string) string { return filepath.Join(home, p) }
	want := map[preset.Preset][]string{
		preset.Go:     {h("sdk"), h("go/pkg/mod"), h(".config/go/env")},
		preset.Rust:   {h(".cargo/bin"), h(".rustup")},
		preset.Node:   {h(".nvm/versions/node")},
		preset.Python: {h(".pyenv"), h("venv"), h(".local/lib/python3.12")},
		preset.C:      nil,
		preset.Git:    {h(".gitconfig"), h(".config/git/config")},
	}
	for _, p := range preset.All() {
		rules := p.Rules(home, getenv)
		var got []string
		for _, path := range paths(rules) {
			if !strings.HasPrefix(path, home+"/") {
				continue // the host's own places (/usr/local/go, /usr/include, /etc/ssl)
			}
			got = append(got, path)
		}
		if !slices.Equal(got, want[p]) {
			t.Errorf("%s: home rules %q, want %q", p, got, want[p])
		}
		for _, r := range rules {
			if r.Access&profile.AccessWrite != 0 {
				t.Errorf("%s grants write: %+v", p, r)
			}
			if r.Why == "" {
				t.Errorf("%s: rule %s says not why", p, r.Path)
			}
		}
		if again := p.Rules(home, getenv); !slices.Equal(again, rules) {
			t.Errorf("%s: rules changed between two calls:\n%v\n%v", p, rules, again)
		}
		if _, err := profile.New(profile.BaseV1, p.Options(home, getenv)...); err != nil {
			t.Errorf("%s: options: %v", p, err)
		}
	}
}

// TestCaches: the caches are the variables the tools read, in distinct
// directories.
func TestCaches(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range preset.All() {
		for _, c := range p.Caches() {
			if c.Env == "" || c.Dir == "" || filepath.Base(c.Dir) != c.Dir || seen[c.Dir] {
				t.Errorf("%s: bad or repeated cache %+v", p, c)
			}
			seen[c.Dir] = true
		}
	}
	if !slices.Contains(preset.Go.Caches(), preset.Cache{Env: "GOCACHE", Dir: "go-build"}) {
		t.Errorf("Go's caches %v lack GOCACHE", preset.Go.Caches())
	}
}

func TestParse(t *testing.T) {
	for _, p := range preset.All() {
		if got, err := preset.Parse(string(p)); err != nil || got != p {
			t.Errorf("Parse(%q) = %q, %v", p, got, err)
		}
	}
	if _, err := preset.Parse("Go"); err == nil {
		t.Error("Parse(\"Go\") succeeded; names are lower case")
	}
}
