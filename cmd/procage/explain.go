package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile/sim"
)

func cmdExplain(args []string, stdout, stderr io.Writer) (int, error) {
	if wantsProfile(args) {
		return cmdExplainProfile(args, stdout, stderr)
	}
	var pf policyFlags
	fs := newFlagSet("explain", "explain [policy flags] OPERATION ARGUMENT\n\n"+
		"Says whether the cage's profile allows OPERATION on ARGUMENT, and which rule\n"+
		"decides, using procage's model of Seatbelt (nothing runs). ARGUMENT is a path\n"+
		"for file-* and process-exec*, host:port or a Unix socket path for network-*,\n"+
		"a name for mach-lookup and sysctl-*, a target (self, others, same-sandbox)\n"+
		"for signal and process-info*. Exit status: 0 allowed, 1 denied, 2 bad input.", stdout)
	pf.register(fs)
	if err := parse(fs, args); err != nil {
		return 2, err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return 2, usagef("want OPERATION and ARGUMENT, e.g. explain --read /usr file-read-data /usr/lib/libc.dylib")
	}
	op, arg := fs.Arg(0), fs.Arg(1)
	access, err := sim.ParseAccess(op, arg)
	if err != nil {
		return 2, usagef("%v", err)
	}
	// explain simulates Seatbelt, so it needs the macOS plan.
	c, err := prepare(&pf, fs, cage.WithBackend(cage.BackendMacOS))
	if err != nil {
		return 2, err
	}
	// The kernel checks the resolved path, so the access is resolved the way
	// the cage resolved the policy.
	r, err := pathresolve.NewHost()
	if err != nil {
		return 1, err
	}
	for _, p := range []*string{&access.Path, &access.Addr} {
		if !strings.HasPrefix(*p, "/") {
			continue
		}
		res, err := r.Resolve(*p)
		if err != nil {
			return 2, usagef("%v", err)
		}
		if res.Path != *p {
			fmt.Fprintf(stdout, "; %s is %s to the kernel\n", *p, res.Path)
		}
		*p = res.Path
	}
	d, err := sim.Decide(c.PlanRules().Profile, access)
	if err != nil {
		return 2, err
	}
	fmt.Fprintln(stdout, d)
	if !d.Allowed {
		return 1, nil
	}
	return 0, nil
}
