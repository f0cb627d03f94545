package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve"
)

// errHelp is returned after a command printed its --help.
var errHelp = errors.New("help requested")

// newFlagSet returns a flag set that prints its usage to stdout on --help
// and reports errors (not usage) through the returned error.
func newFlagSet(name, synopsis string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: procage %s\n\nFlags:\n", synopsis)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parse parses args, turning flag errors into usage errors.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return errHelp
		}
		return usagef("%v", err)
	}
	return nil
}

// prepare builds the cage the policy flags describe: the same path
// resolution and lowering a caller of package cage gets.
func prepare(pf *policyFlags, fs *flag.FlagSet, opts ...cage.Option) (*cage.Cage, error) {
	p, err := pf.policy(setFlags(fs))
	if err != nil {
		return nil, err
	}
	c, err := cage.New(p, append([]cage.Option{cage.WithCompileLimit(pf.limit)}, opts...)...)
	var le *cage.LimitError
	var ce *cage.CaseSensitiveError
	var pe *pathresolve.PathError
	switch {
	case errors.As(err, &le):
		return nil, usagef("--limit %d: %v", pf.limit, err)
	case errors.As(err, &ce), errors.As(err, &pe):
		return nil, usagef("%v", err)
	}
	return c, err
}

func cmdPlan(args []string, stdout, stderr io.Writer) error {
	var pf policyFlags
	fs := newFlagSet("plan", "plan [policy flags] [--json]", stdout)
	pf.register(fs)
	asJSON := fs.Bool("json", false, "print a JSON object (policy, rewrites, params, rules, profile) instead of SBPL text")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (paths go after --read, --write or --exec)", fs.Arg(0))
	}
	// The Seatbelt plan, from any OS, until a flag picks the backend.
	c, err := prepare(&pf, fs, cage.WithBackend(cage.BackendMacOS))
	if err != nil {
		return err
	}
	plan := c.PlanRules()
	if *asJSON {
		type rewrite struct {
			From   string `json:"from"`
			To     string `json:"to"`
			Reason string `json:"reason"`
			Via    string `json:"via,omitempty"`
		}
		out := struct {
			Policy   any       `json:"policy"`
			Rewrites []rewrite `json:"rewrites"`
			Params   []string  `json:"params"`
			Rules    int       `json:"rules"`
			Profile  string    `json:"profile"`
		}{Policy: c.Policy(), Rewrites: []rewrite{}, Params: append([]string{}, plan.Params...), Rules: plan.Rules(), Profile: c.Plan()}
		for _, r := range c.Rewrites() {
			out.Rewrites = append(out.Rewrites, rewrite{From: r.From, To: r.To, Reason: r.Reason.String(), Via: r.Via})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	// Rewrites are SBPL comments, so the whole output is a valid profile.
	fmt.Fprintf(stdout, "; procage plan: %d rules\n", plan.Rules())
	for _, r := range c.Rewrites() {
		fmt.Fprintf(stdout, "; rewrite: %s -> %s (%s %s)\n", r.From, r.To, r.Reason, r.Via)
	}
	for _, p := range plan.Params {
		fmt.Fprintf(stdout, "; parameter bound per spawn: %s\n", p)
	}
	_, err = io.WriteString(stdout, c.Plan())
	return err
}
