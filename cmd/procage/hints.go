package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile/linux"
	"github.com/procage-go/procage/profile/seatbelt"
	"github.com/procage-go/procage/profile/sim"
)

// execDenied explains an exec the cage refused (a *cage.ApplyError at
// cage.StepExec with EPERM or EACCES): the program as found (python3 is
// ~/.pyenv/shims/python3 through PATH), and the flag that would allow it
// where the cage's plan is certain to refuse it for want of a rule: the
// program's directory, or a script's #! interpreter's. Otherwise it says
// what was refused and, where a rule refused it, which layer.
func execDenied(c *cage.Cage, b *backend, pf *policyFlags, cmd *cage.Cmd, err error) error {
	prog := cmd.Path
	if !strings.HasPrefix(prog, "/") {
		if abs, aerr := filepath.Abs(filepath.Join(cmd.Dir, prog)); aerr == nil {
			prog = abs
		}
	}
	what := shellQuote(prog)
	switch name := cmd.Args[0]; {
	case !strings.Contains(name, "/"):
		what = shellQuote(name) + " (" + shellQuote(prog) + " in PATH)"
	case name != prog:
		what = shellQuote(name) + " (" + shellQuote(prog) + ")"
	}
	kernel := kernelPath(b, prog)
	if kernel != prog {
		what += " (" + shellQuote(kernel) + " to the kernel)"
	}
	v := execVerdict(c, kernel, kernel)
	switch {
	case !v.known:
		return fmt.Errorf("%s: %s", what, describe(err))
	case !v.allowed && v.layer == "":
		if name, root, ok := versionShim(kernel); ok {
			return fmt.Errorf("%s: the cage does not allow executing it; %s: to allow it: %s", what, shimNote(name, root), shimFix(pf, name, root))
		}
		return fmt.Errorf("%s: the cage does not allow executing it; to allow it: %s", what, execFix(pf, path.Dir(kernel)))
	case !v.allowed:
		return fmt.Errorf("%s: executing it is denied by the cage's %s rules (procage explain [policy flags] process-exec %s says which)", what, v.layer, shellQuote(kernel))
	}
	if interp := interpreter(prog); interp != "" {
		k := kernelPath(b, interp)
		switch v := execVerdict(c, k, kernel); {
		case !v.known || v.allowed:
		case v.layer == "":
			return fmt.Errorf("%s: the cage does not allow executing its #! interpreter %s; to allow it: %s", what, shellQuote(k), execFix(pf, path.Dir(k)))
		default:
			return fmt.Errorf("%s: executing its #! interpreter %s is denied by the cage's %s rules (procage explain [policy flags] process-exec %s says which)", what, shellQuote(k), v.layer, shellQuote(k))
		}
	}
	return fmt.Errorf("%s: executing it was refused (%v), though the cage's rules allow it", what, errors.Unwrap(err))
}

// execFix is what to type to allow executing the tree dir.
func execFix(pf *policyFlags, dir string) string {
	if pf.policyFile != "" {
		return fmt.Sprintf(`add {"access": ["read", "exec"], "subpath": %q} to the "fs" rules of %s`, dir, pf.policyFile)
	}
	return "--exec " + shellQuote(dir)
}

// kernelPath is the spelling of p the kernel checks, as the cage resolved
// its own paths; p itself when it cannot be resolved.
func kernelPath(b *backend, p string) string {
	if b.resolver == nil {
		return p
	}
	res, err := b.resolver.Resolve(p)
	if err != nil {
		return p
	}
	return res.Path
}

// verdict is what a cage's plan decides for executing a file. layer names
// the rules that deny it; "" when no rule allows it (the default decides).
type verdict struct {
	allowed, known bool
	layer          string
}

// execVerdict decides executing the file at kernel path p in a run whose
// target is target: by procage's model of Seatbelt for a macOS plan, by
// the Landlock ruleset for a Linux one (execute and read_file: what no rule
// allows is denied; a right a hard-deny entry took is the hard-deny
// layer's). known is false when neither
// plan can say.
func execVerdict(c *cage.Cage, p, target string) verdict {
	if pr := c.SeatbeltPlan(); pr != nil {
		d, err := sim.Decide(pr.Profile, sim.Access{Op: "process-exec", Path: p, VnodeType: "REGULAR-FILE",
			Params: map[string]string{seatbelt.ParamExecTarget: target}})
		if err != nil {
			return verdict{}
		}
		v := verdict{allowed: d.Allowed, known: true}
		if !d.Allowed && !d.Default {
			v.layer = d.Layer
		}
		return v
	}
	if lp := c.LinuxPlan(); lp != nil {
		d, err := lp.Decide(linux.Access{Op: linux.OpExec, Path: p})
		if err != nil {
			return verdict{}
		}
		v := verdict{allowed: d.Allowed, known: true}
		for _, ch := range d.Checks {
			if len(ch.Denied) > 0 {
				v.layer = "hard-deny"
			}
		}
		return v
	}
	return verdict{}
}

// interpreter returns the absolute interpreter path of a #! script, or "".
func interpreter(prog string) string {
	f, err := os.Open(prog)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	line, ok := bytes.CutPrefix(buf[:n], []byte("#!"))
	if !ok {
		return ""
	}
	line, _, _ = bytes.Cut(line, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) == 0 || !strings.HasPrefix(fields[0], "/") {
		return ""
	}
	return fields[0]
}

// describeLink renders a refused suspect link with the flag that accepts
// it: cage.AcceptLink matches the link's kernel spelling, as the
// *pathresolve.LinkError names it.
func describeLink(pol *cage.PolicyError) string {
	le, ok := errors.AsType[*pathresolve.LinkError](pol)
	if !ok {
		return stripPrefixes(pol.Error())
	}
	var where string
	switch {
	case le.Tree == "":
		where = fmt.Sprintf("through the link %s to its own ancestor %s", shellQuote(le.Link), shellQuote(le.Resolved))
	case le.Writable:
		where = fmt.Sprintf("through the link %s inside the writable tree %s, out of it to %s", shellQuote(le.Link), shellQuote(le.Tree), shellQuote(le.Resolved))
	default:
		where = fmt.Sprintf("through the link %s inside the tree %s, out of it to %s", shellQuote(le.Link), shellQuote(le.Tree), shellQuote(le.Resolved))
	}
	return fmt.Sprintf("%s resolves %s, as a link a caged run planted would (if you trust the link: --accept-link %s)", shellQuote(le.Path), where, shellQuote(le.Link))
}
