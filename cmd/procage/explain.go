package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
	"github.com/procage-go/procage/profile/sim"
)

const explainSynopsis = `explain [policy flags] [--backend macos|linux] [--json] OPERATION ARGUMENT
       explain --profile FILE [--param NAME=VALUE]... OPERATION ARGUMENT

Says whether the cage's plan allows OPERATION on ARGUMENT, and which rule
decides (nothing runs). The plan is the host's backend's by default: Linux
on Linux, macOS elsewhere.

--backend linux decides with the Landlock ruleset and seccomp filter, as the
kernel checks them (a right is granted when a rule on the path or on a
directory above it grants it):
  read, list, write, truncate, exec PATH     open a file for reading, list a
                                             directory, open for writing,
                                             truncate, execve (execute and
                                             read_file on PATH)
  create, mkdir, remove, rmdir, symlink, mkfifo PATH
                                             make or remove an entry (the
                                             right on PATH's directory)
  RIGHT PATH                                 one Landlock right: read_file,
                                             make_reg, refer, ioctl_dev, ...
  connect PORT|HOST:PORT|PATH, bind PORT|HOST:PORT
                                             a TCP socket (Landlock sees the
                                             port only) or a Unix socket
  SYSCALL [ARG,ARG...]                       a system call as seccomp sees it,
                                             e.g. clone CLONE_NEWUSER, socket
                                             AF_INET,SOCK_DGRAM, chmod /f,04755
The Seatbelt names file-read-data, file-write-data, file-write-create,
file-write-unlink, process-exec, network-outbound and network-bind mean
read, write, create, remove, exec, connect and bind. The answer names the
Landlock rule (layer and path) that grants each right, the hard-deny entry
that took it, the seccomp rule that refuses the call, or the gap that makes
run refuse the policy, with the --accept-gap NAME that accepts it (and what
the access would then get).

--backend macos decides with procage's model of Seatbelt: ARGUMENT is a path
for file-* and process-exec*, host:port or a Unix socket path for network-*,
a name for mach-lookup and sysctl-*, a target (self, others, same-sandbox)
for signal and process-info*. --profile FILE decides with that SBPL profile
as written, without procage's layers (procage explain --profile FILE --help).

Exit status: 0 allowed, 1 denied (also when run would refuse the policy), 125
bad input or another failure.`

func cmdExplain(args []string, stdout, stderr io.Writer) (int, error) {
	if wantsProfile(args) {
		return cmdExplainProfile(args, stdout, stderr)
	}
	var pf policyFlags
	fs := newFlagSet("explain", explainSynopsis, stdout)
	pf.register(fs)
	backendName := fs.String("backend", defaultBackend(), "explain the plan for `OS`: linux (Landlock and seccomp) or macos (procage's model of Seatbelt; off macOS paths resolve against a simulated Mac, home /Users/$USER)")
	asJSON := fs.Bool("json", false, "print a JSON object (access, allowed, the deciding rule, kernel paths) instead of text")
	// Documented here, handled by cmdExplainProfile before these flags are
	// parsed.
	fs.String("profile", "", "decide with the SBPL profile in `FILE` exactly as written (Seatbelt only; see explain --profile FILE --help)")
	if err := fs.parse(args); err != nil {
		return exitFailure, err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return exitFailure, usagef("want OPERATION and ARGUMENT, e.g. explain --read /usr read /usr/lib/os-release")
	}
	op, arg := fs.Arg(0), fs.Arg(1)
	b, err := newBackend(*backendName)
	if err != nil {
		return exitFailure, err
	}
	if b.name == "linux" {
		return explainLinux(&pf, fs, b, op, arg, *asJSON, stdout, stderr)
	}
	access, err := sim.ParseAccess(op, arg)
	if err != nil {
		return exitFailure, err
	}
	c, err := prepare(&pf, fs, b, stderr)
	if err != nil {
		return exitFailure, err
	}
	// The kernel checks the resolved path, so the access is resolved the way
	// the cage resolved the policy.
	var resolved []argPath
	for _, p := range []*string{&access.Path, &access.Addr} {
		r, err := resolveArg(b, op, arg, p)
		if err != nil {
			return exitFailure, err
		}
		resolved = append(resolved, r...)
	}
	pr := c.SeatbeltPlan()
	if pr == nil {
		return exitFailure, fmt.Errorf("BUG: --backend %s gave no Seatbelt plan", b.name)
	}
	d, err := sim.Decide(pr.Profile, access)
	if err != nil {
		return exitFailure, err
	}
	code := 0
	if !d.Allowed {
		code = 1
	}
	if *asJSON {
		out := struct {
			Backend   string    `json:"backend"`
			Operation string    `json:"operation"`
			Argument  string    `json:"argument"`
			Resolved  []argPath `json:"resolved"`
			Allowed   bool      `json:"allowed"`
			Default   bool      `json:"default"`
			Rule      int       `json:"rule"`
			Layer     string    `json:"layer"`
			Text      string    `json:"text"`
			Decision  string    `json:"decision"`
		}{b.name, d.Op, arg, append([]argPath{}, resolved...), d.Allowed, d.Default, d.Rule, d.Layer, d.Text, d.String()}
		return code, writeJSON(stdout, out)
	}
	printResolved(stdout, resolved)
	fmt.Fprintln(stdout, d)
	return code, nil
}

// argPath is an argument's path and the spelling the kernel checks.
type argPath struct {
	Path   string `json:"path"`
	Kernel string `json:"kernel"`
}

// resolveArg replaces the absolute path *p with its kernel spelling, and
// says so when they differ.
func resolveArg(b *backend, op, arg string, p *string) ([]argPath, error) {
	if !strings.HasPrefix(*p, "/") {
		return nil, nil
	}
	res, err := b.resolver.Resolve(*p)
	if err != nil {
		return nil, &inputError{where: op + " " + arg, err: err}
	}
	var out []argPath
	if res.Path != *p {
		out = append(out, argPath{*p, res.Path})
	}
	*p = res.Path
	return out, nil
}

func printResolved(w io.Writer, resolved []argPath) {
	for _, r := range resolved {
		fmt.Fprintf(w, "; %s is %s to the kernel\n", r.Path, r.Kernel)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// explainLinux decides an access with the Linux plan. A policy run would
// refuse for its gaps is planned again with them accepted, so the answer
// names the gap, the flag that accepts it and what the access would get.
func explainLinux(pf *policyFlags, fs *flagSet, b *backend, op, arg string, asJSON bool, stdout, stderr io.Writer) (int, error) {
	access, err := linux.ParseAccess(op, arg)
	if _, serr := sim.ParseAccess(op, arg); err != nil && serr == nil {
		return exitFailure, badValuef("%q: a Seatbelt operation with no Linux counterpart (ask the macOS plan: --backend macos)", op)
	}
	if err != nil {
		return exitFailure, err
	}
	resolved, err := resolveArg(b, op, arg, &access.Path)
	if err != nil {
		return exitFailure, err
	}
	c, err := prepare(pf, fs, b, stderr)
	var refused []profile.GapPart
	if pol, ok := errors.AsType[*cage.PolicyError](err); ok && pol.Kind == cage.ErrGap {
		refused = pol.Gaps
		var gaps []profile.Gap
		for _, p := range refused {
			gaps = append(gaps, p.Gap)
		}
		c, err = prepare(pf, fs, b, io.Discard, cage.AcceptGaps(gaps...))
	}
	if err != nil {
		return exitFailure, err
	}
	pl := c.LinuxPlan()
	if pl == nil {
		return exitFailure, fmt.Errorf("BUG: --backend %s gave no Linux plan", b.name)
	}
	d, err := pl.Decide(access)
	if err != nil {
		return exitFailure, err
	}
	allowed := d.Allowed && len(refused) == 0
	text := d.String()
	if len(refused) > 0 {
		var flags []string
		for _, p := range refused {
			if f := "--accept-gap " + string(p.Gap); !strings.Contains(strings.Join(flags, " "), f) {
				flags = append(flags, f)
			}
		}
		would := d
		would.Gaps = nil
		text = "denied: run refuses this policy: " + describeGaps(refused) + "\n; with " + strings.Join(flags, " ") + ": " + would.String()
	}
	code := 0
	if !allowed {
		code = 1
	}
	if asJSON {
		out := struct {
			Backend   string            `json:"backend"`
			Operation string            `json:"operation"`
			Argument  string            `json:"argument"`
			Resolved  []argPath         `json:"resolved"`
			Allowed   bool              `json:"allowed"`
			Refused   []profile.GapPart `json:"refused_gaps"`
			Decision  string            `json:"decision"`
			Linux     linux.Decision    `json:"linux"`
		}{b.name, op, arg, append([]argPath{}, resolved...), allowed, append([]profile.GapPart{}, refused...), text, d}
		return code, writeJSON(stdout, out)
	}
	printResolved(stdout, resolved)
	fmt.Fprintln(stdout, text)
	return code, nil
}
