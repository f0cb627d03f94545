package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/procage-go/procage/profile/sim"
)

func cmdExplain(args []string, stdout, stderr io.Writer) (int, error) {
	if wantsProfile(args) {
		return cmdExplainProfile(args, stdout, stderr)
	}
	var pf policyFlags
	fs := newFlagSet("explain", "explain [policy flags] [--backend macos|linux] [--json] OPERATION ARGUMENT\n\n"+
		"Says whether the cage's profile allows OPERATION on ARGUMENT, and which rule\n"+
		"decides, using procage's model of Seatbelt (nothing runs). ARGUMENT is a path\n"+
		"for file-* and process-exec*, host:port or a Unix socket path for network-*,\n"+
		"a name for mach-lookup and sysctl-*, a target (self, others, same-sandbox)\n"+
		"for signal and process-info*. Exit status: 0 allowed, 1 denied, 125 bad input or another failure.", stdout)
	pf.register(fs)
	// explain models Seatbelt, so it explains the macOS plan by default.
	backendName := fs.String("backend", "macos", "explain the plan for `OS`: macos (off macOS: paths resolved against a simulated Mac, home /Users/$USER); Seatbelt is the only sandbox explain models")
	asJSON := fs.Bool("json", false, "print a JSON object (access, allowed, rule, layer, text, default, kernel paths) instead of text")
	if err := fs.parse(args); err != nil {
		return exitFailure, err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return exitFailure, usagef("want OPERATION and ARGUMENT, e.g. explain --read /usr file-read-data /usr/lib/libc.dylib")
	}
	op, arg := fs.Arg(0), fs.Arg(1)
	access, err := sim.ParseAccess(op, arg)
	if err != nil {
		return exitFailure, err
	}
	b, err := newBackend(*backendName)
	if err != nil {
		return exitFailure, err
	}
	c, err := prepare(&pf, fs, b, stderr)
	if err != nil {
		return exitFailure, err
	}
	// The kernel checks the resolved path, so the access is resolved the way
	// the cage resolved the policy.
	type kernelPath struct {
		Path   string `json:"path"`
		Kernel string `json:"kernel"`
	}
	var resolved []kernelPath
	for _, p := range []*string{&access.Path, &access.Addr} {
		if !strings.HasPrefix(*p, "/") {
			continue
		}
		res, err := b.resolver.Resolve(*p)
		if err != nil {
			return exitFailure, &inputError{where: op + " " + arg, err: err}
		}
		if res.Path != *p {
			resolved = append(resolved, kernelPath{*p, res.Path})
		}
		*p = res.Path
	}
	pr := c.SeatbeltPlan()
	if pr == nil {
		return exitFailure, badValuef("--backend %s: explain models Seatbelt only; use --backend macos", b.name)
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
			Backend   string       `json:"backend"`
			Operation string       `json:"operation"`
			Argument  string       `json:"argument"`
			Resolved  []kernelPath `json:"resolved"`
			Allowed   bool         `json:"allowed"`
			Default   bool         `json:"default"`
			Rule      int          `json:"rule"`
			Layer     string       `json:"layer"`
			Text      string       `json:"text"`
			Decision  string       `json:"decision"`
		}{b.name, d.Op, arg, append([]kernelPath{}, resolved...), d.Allowed, d.Default, d.Rule, d.Layer, d.Text, d.String()}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return code, enc.Encode(out)
	}
	for _, r := range resolved {
		fmt.Fprintf(stdout, "; %s is %s to the kernel\n", r.Path, r.Kernel)
	}
	fmt.Fprintln(stdout, d)
	return code, nil
}
