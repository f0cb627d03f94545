package profile

import (
	"os"
	"strings"
	"testing"
)

// tableMarkdown renders the hard-deny table for the docs: one row an
// entry, as the user's environment names it.
func tableMarkdown() string {
	var b strings.Builder
	b.WriteString("| Class | Path | Refused | Where |\n|---|---|---|---|\n")
	for _, e := range protectedTable {
		p := e.Name
		switch e.Anchor {
		case AnchorHome:
			p = "~/" + p
		case AnchorXDGConfig:
			p = "$XDG_CONFIG_HOME/" + p
		case AnchorZDotDir:
			p = "$ZDOTDIR/" + p
		case AnchorAnyTree:
			p = "`" + p + "` in any tree (but the data git writes)"
		}
		if e.Anchor != AnchorAnyTree {
			if e.Prefix {
				p += "*"
			}
			if e.Tree {
				p += "/"
			}
			p = "`" + p + "`"
		}
		where := "macOS, Linux"
		if e.OS == "linux" {
			where = "Linux"
		}
		b.WriteString("| " + string(e.Class) + " | " + p + " | " + e.Protect.String() + " | " + where + " |\n")
	}
	return b.String()
}

const (
	tableBegin = "<!-- hard-deny table: generated from profile.ProtectedTable by TestDocsShowTable; PROCAGE_UPDATE_DOCS=1 rewrites it -->\n"
	tableEnd   = "<!-- end of the hard-deny table -->\n"
)

// TestDocsShowTable: the threat model and the Linux backend's page show
// the one hard-deny table, as the code has it.
func TestDocsShowTable(t *testing.T) {
	want := tableBegin + tableMarkdown() + tableEnd
	for _, doc := range []string{"../docs/threat-model.md", "../docs/linux-backend.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		i, j := strings.Index(s, tableBegin), strings.Index(s, tableEnd)
		if i < 0 || j < i {
			t.Errorf("%s: no hard-deny table between %q and %q", doc, tableBegin, tableEnd)
			continue
		}
		if got := s[i : j+len(tableEnd)]; got != want {
			if os.Getenv("PROCAGE_UPDATE_DOCS") == "1" {
				if err := os.WriteFile(doc, []byte(s[:i]+want+s[j+len(tableEnd):]), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			t.Errorf("%s: the hard-deny table differs from profile.ProtectedTable; run PROCAGE_UPDATE_DOCS=1 go test ./profile -run TestDocsShowTable", doc)
		}
	}
}

func TestProtectedCoversAndInside(t *testing.T) {
	env := Env{Home: "/home/u"}
	place := func(e Protected) ProtectedPath {
		pp, ok := e.Place(env)
		if !ok {
			t.Fatalf("%+v: not placed", e)
		}
		return pp
	}
	ssh := place(home(Secrets, ".ssh/"))
	netrc := place(home(Secrets, ".netrc"))
	gitconfig := place(prefix(home(TrustHandoff, ".gitconfig")))
	python := place(prefix(home(TrustHandoff, ".local/lib/python/")))
	git := place(Protected{Class: TrustHandoff, Anchor: AnchorAnyTree, Name: ".git", Tree: true, Protect: ProtectWrite})
	tests := []struct {
		pp     ProtectedPath
		path   string
		covers bool
		inside bool // the entry lies inside path as a tree
	}{
		{ssh, "/home/u/.ssh", true, false},
		{ssh, "/home/u/.ssh/keys/id", true, false},
		{ssh, "/home/u/.SSH/id_rsa", true, false},
		{ssh, "/home/u/.sshx", false, false},
		{ssh, "/home/u", false, true},
		{ssh, "/", false, true},
		{ssh, "/home/u/src", false, false},
		{netrc, "/home/u/.netrc", true, false},
		{netrc, "/home/u/.netrc/x", false, false},
		{gitconfig, "/home/u/.gitconfig", true, false},
		{gitconfig, "/home/u/.gitconfig-work", true, false},
		{gitconfig, "/home/u/.gitconfig.d/x", false, false},
		{gitconfig, "/home/u", false, true},
		{python, "/home/u/.local/lib/python3.12/site-packages/x.pth", true, false},
		{python, "/home/u/.local/lib", false, true},
		{python, "/home/u/.local/lib/node", false, false},
		{git, "/p/.git/hooks/pre-commit", true, true},
		{git, "/p/.git/config", true, true},
		{git, "/p/.git/objects/ab/cd", false, true},
		{git, "/p/src/main.go", false, true},
		{git, "/p/HEAD", true, true},
	}
	for _, tt := range tests {
		if got := tt.pp.Covers(tt.path); got != tt.covers {
			t.Errorf("%s covers %s = %v, want %v", tt.pp.Path+tt.pp.Name, tt.path, got, tt.covers)
		}
		if got := tt.pp.Inside(tt.path); got != tt.inside {
			t.Errorf("%s inside %s = %v, want %v", tt.pp.Path+tt.pp.Name, tt.path, got, tt.inside)
		}
	}
	if _, ok := place(home(Secrets, ".ssh/")).Protected.Place(Env{}); ok {
		t.Error("a home entry placed without a home directory")
	}
	if _, ok := anchor(AnchorZDotDir, home(TrustHandoff, ".zshrc")).Place(Env{Home: "/h", ZDotDir: "/h"}); ok {
		t.Error("a $ZDOTDIR entry placed where $ZDOTDIR is the home directory")
	}
}

func TestFoldCase(t *testing.T) {
	cases := []struct{ in, want string }{
		{`/\.git$`, `/\.[Gg][Ii][Tt]$`},
		{`A1-z`, `[Aa]1-[Zz]`},
		{`[^/]+`, `[^/]+`},
	}
	for _, tc := range cases {
		if got := FoldCase(tc.in); got != tc.want {
			t.Errorf("FoldCase(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
