package main

import (
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/procage-go/procage/cage"
)

// Hints after a run that failed. The cage cannot tell why a command
// failed: a refused fork returns EPERM (Linux seccomp) or is denied by
// Seatbelt with no count either side, and the command's stderr goes
// straight to the caller. So a hint is printed only where the plan makes
// the cause likely, and says "if".

// versionShim reports whether the program at kernel path p is a version
// manager's shim: a #! script in ROOT/shims (pyenv, rbenv, nodenv, goenv,
// asdf) that runs the real program from ROOT in new processes (pyenv's
// shim execs ROOT/libexec/pyenv, which forks to find the version and
// execs ROOT/versions/V/bin/NAME). It returns the manager's name and ROOT.
func versionShim(p string) (name, root string, ok bool) {
	dir := path.Dir(p)
	if path.Base(dir) != "shims" || interpreter(p) == "" {
		return "", "", false
	}
	root = path.Dir(dir)
	name = strings.TrimPrefix(path.Base(root), ".")
	switch name {
	case "pyenv", "rbenv", "nodenv", "goenv", "jenv", "asdf":
	default:
		name = "a version manager"
	}
	return name, root, true
}

// shimFix is what to type to run a shim of the manager at root: its root
// executable and fork, or the preset that grants both.
func shimFix(pf *policyFlags, name, root string) string {
	fix := execFix(pf, root)
	if pf.policyFile != "" {
		fix += ` and set "fork": true`
	} else {
		fix += " --fork"
	}
	if name == "pyenv" {
		fix += " (or --preset python)"
	}
	return fix
}

// shimNote is the clause naming a shim and why it needs more than itself.
func shimNote(name, root string) string {
	if name != "a version manager" {
		name = name + "'s"
	}
	return fmt.Sprintf("it is %s shim, a script that runs the real program from %s in new processes", name, shellQuote(root))
}

// forkers are programs whose job is starting others: a shell (a
// pipeline, a command substitution), make (a shell per recipe), env,
// xargs. A #! script counts too (its interpreter is one).
var forkers = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "fish": true, "busybox": true,
	"make": true, "gmake": true, "env": true, "xargs": true}

// failedRunHint returns the one hint for a command that ran and exited
// with a non-zero status (not a signal), or "": for a version manager's
// shim whose root the cage does not let it execute, or which it does not
// let fork, what to add; for a program that starts others under a policy
// without fork, that a refused fork may be why, and --fork.
func failedRunHint(c *cage.Cage, b *backend, pf *policyFlags, cmd *cage.Cmd, err error) string {
	ee, ok := err.(*exec.ExitError)
	if !ok {
		return ""
	}
	if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
		return ""
	}
	prog := cmd.Path
	if !strings.HasPrefix(prog, "/") {
		if abs, aerr := filepath.Abs(filepath.Join(cmd.Dir, prog)); aerr == nil {
			prog = abs
		}
	}
	kernel := kernelPath(b, prog)
	forks := c.Policy().Forking()
	if name, root, ok := versionShim(kernel); ok {
		if v := execVerdict(c, path.Join(root, "libexec", "x"), kernel); !forks || (v.known && !v.allowed) {
			return fmt.Sprintf("%s exited with status %d; %s: to allow it: %s",
				shellQuote(cmd.Args[0]), ee.ExitCode(), shimNote(name, root), shimFix(pf, name, root))
		}
		return ""
	}
	if forks || !(forkers[path.Base(kernel)] || interpreter(prog) != "") {
		return ""
	}
	fix := "--fork"
	if pf.policyFile != "" {
		fix = `set "fork": true in ` + shellQuote(pf.policyFile)
	}
	return fmt.Sprintf("%s exited with status %d, and the cage does not let it create processes: if that is why (sh: \"Cannot fork\", \"fork: Operation not permitted\"), allow it: %s",
		shellQuote(cmd.Args[0]), ee.ExitCode(), fix)
}
