package cage

import (
	"os"
	"slices"
)

// terminalGrants returns a read-write grant for each distinct terminal
// among the child's stdin, stdout and stderr (an *os.File open on one), by
// the device's kernel path. The profile names no terminal but /dev/tty;
// these grants are how the child keeps using the terminal it was given
// (reads, writes and the ioctls a shell needs), and no other (issue 12:
// a regex over /dev/ttys* let a child read and type into every terminal).
func terminalGrants(stdio ...any) []grant {
	var out []grant
	for _, v := range stdio {
		f, ok := v.(*os.File)
		if !ok || f == nil {
			continue
		}
		p, ok := terminalName(f)
		if !ok || slices.ContainsFunc(out, func(g grant) bool { return g.path == p }) {
			continue
		}
		out = append(out, grant{path: p, write: true})
	}
	return out
}
