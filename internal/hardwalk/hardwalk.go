// Package hardwalk lists, for every entry of the hard-deny table
// ([profile.ProtectedTable]), the grants that must not reach it: the
// entry itself, a directory beneath it, its parent and the home
// directory. The Linux cage tests run each for real and the simulator
// tests decide each under every Seatbelt variant, so an entry added to
// the table is covered by both without further code.
package hardwalk

import (
	"path"

	"github.com/procage-go/procage/profile"
)

// Grant is one way a policy or a spawn could reach an entry.
type Grant struct {
	Name string // "entry", "beneath", "parent" or "home"
	Path string
	Dir  bool // a directory (a tree rule); otherwise one file
	// File is the file the grant would expose: a file at or beneath
	// Path and covered by the entry.
	File string
}

// Case is one table entry placed in an environment.
type Case struct {
	Entry profile.ProtectedPath
	// Path is the entry's placed path (for every git directory, the one
	// in project).
	Path string
	// Dirs are directories to create (in order) and Files files to
	// create so that every grant's File exists.
	Dirs, Files []string
	Grants      []Grant
}

// Cases places every entry of goos's table in env; project is a
// directory inside the home directory standing for any tree that holds a
// git directory.
func Cases(goos string, env profile.Env, project string) []Case {
	var out []Case
	for _, e := range profile.ProtectedTable(goos) {
		pp, ok := e.Place(env)
		if !ok {
			continue
		}
		c := Case{Entry: pp, Path: pp.Path}
		switch {
		case e.Anchor == profile.AnchorAnyTree:
			c.Path = path.Join(project, e.Name)
		case e.Prefix:
			c.Path += "-procage" // .gitconfig-procage, python-procage
		}
		var file string
		if e.Tree {
			beneath := path.Join(c.Path, "hooks")
			file = path.Join(beneath, "pre-commit")
			c.Dirs = append(ancestors(env.Home, c.Path), c.Path, beneath)
			c.Grants = append(c.Grants, Grant{Name: "entry", Path: c.Path, Dir: true, File: file},
				Grant{Name: "beneath", Path: beneath, Dir: true, File: file})
		} else {
			file = c.Path
			c.Dirs = ancestors(env.Home, c.Path)
			c.Grants = append(c.Grants, Grant{Name: "entry", Path: c.Path, File: file})
		}
		c.Files = []string{file}
		c.Grants = append(c.Grants, Grant{Name: "parent", Path: path.Dir(c.Path), Dir: true, File: file},
			Grant{Name: "home", Path: env.Home, Dir: true, File: file})
		out = append(out, c)
	}
	return out
}

// ancestors returns the directories strictly between home and p, from
// the top; none where p is not beneath home.
func ancestors(home, p string) []string {
	var out []string
	for d := path.Dir(p); d != home && len(d) > len(home); d = path.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}
