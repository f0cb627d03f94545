package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/procage-go/procage/profile"
)

// usageError is bad input: the command exits 2 after printing it.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// policyFlags are the flags that describe a policy, shared by plan,
// explain and run.
type policyFlags struct {
	read, write, exec, sockets, mach, waive, seatbelt listFlag
	ports                                             listFlag
	network, policyFile                               string
	fork, execOnly, listenAny                         bool
	limit                                             int
}

func (pf *policyFlags) register(fs *flag.FlagSet) {
	fs.Var(&pf.read, "read", "allow reading the tree at `PATH` (repeatable)")
	fs.Var(&pf.write, "write", "allow reading and writing the tree at `PATH` (repeatable)")
	fs.Var(&pf.exec, "exec", "allow reading and executing the tree at `PATH` (repeatable)")
	fs.StringVar(&pf.network, "network", "off", "network `MODE`: off, loopback (localhost, on the --port ports) or on (remote hosts; localhost only on the --port ports)")
	fs.Var(&pf.ports, "port", "with --network loopback or on, allow this localhost `PORT`, or any for every port (repeatable; loopback needs one)")
	fs.BoolVar(&pf.listenAny, "listen-any", false, "with --network on, listen on every interface, not only localhost")
	fs.Var(&pf.sockets, "unix-socket", "allow connecting to the Unix socket at `PATH` (repeatable)")
	fs.Var(&pf.mach, "mach", "allow looking up the global Mach service `NAME` (repeatable)")
	fs.BoolVar(&pf.fork, "fork", false, "let the target create processes (a forking policy)")
	fs.BoolVar(&pf.execOnly, "exec-target-only", false, "let the target execute no program but itself")
	fs.Var(&pf.waive, "waive", "lift the hard-deny `CLASS`: process-access, secrets, trust-handoff or service-manager (repeatable)")
	fs.Var(&pf.seatbelt, "seatbelt", "add a raw Seatbelt `RULE`, e.g. '(allow sysctl-read (sysctl-name \"kern.ostype\"))' (repeatable)")
	fs.StringVar(&pf.policyFile, "policy", "", "read the policy from the JSON `FILE` ({\"version\":1,...}) instead of rule flags")
	fs.IntVar(&pf.limit, "limit", profile.DefaultLimit, "refuse profiles with more than `N` rules")
}

// policy builds the policy the flags describe. set reports which flags
// were given on the command line.
func (pf *policyFlags) policy(set map[string]bool) (profile.Policy, error) {
	if pf.limit < 1 {
		return profile.Policy{}, usagef("--limit %d: must be at least 1", pf.limit)
	}
	if pf.policyFile != "" {
		for _, name := range []string{"read", "write", "exec", "network", "port", "listen-any", "unix-socket", "mach", "fork", "exec-target-only", "waive", "seatbelt"} {
			if set[name] {
				return profile.Policy{}, usagef("--policy and --%s: give the policy either as a file or as flags", name)
			}
		}
		f, err := os.Open(pf.policyFile)
		if err != nil {
			return profile.Policy{}, usagef("--policy: %v", err)
		}
		defer f.Close()
		p, err := profile.ParseJSON(f)
		if err != nil {
			return profile.Policy{}, usagef("--policy %s: %v", pf.policyFile, err)
		}
		return p, nil
	}
	var opts []profile.Option
	for _, p := range pf.read {
		opts = append(opts, flagged("read", p, profile.Read(p)))
	}
	for _, p := range pf.write {
		opts = append(opts, flagged("write", p, profile.ReadWrite(p)))
	}
	for _, p := range pf.exec {
		opts = append(opts, flagged("exec", p, profile.Exec(p)))
	}
	mode, err := parseMode(pf.network)
	if err != nil {
		return profile.Policy{}, err
	}
	var ports []int
	for _, s := range pf.ports {
		if s == "any" {
			ports = append(ports, profile.AnyPort)
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return profile.Policy{}, usagef("--port %q: not a number or any", s)
		}
		ports = append(ports, n)
	}
	opts = append(opts, flagged("network/--port", pf.network, profile.Network(mode, ports...)))
	if pf.listenAny {
		opts = append(opts, flagged("listen-any", "true", profile.ListenAnyInterface()))
	}
	for _, p := range pf.sockets {
		opts = append(opts, flagged("unix-socket", p, profile.UnixSocket(p)))
	}
	for _, m := range pf.mach {
		opts = append(opts, flagged("mach", m, profile.MachLookup(m)))
	}
	if pf.fork {
		opts = append(opts, profile.Fork())
	}
	if pf.execOnly {
		opts = append(opts, profile.ExecTargetOnly())
	}
	for _, w := range pf.waive {
		opts = append(opts, flagged("waive", w, profile.Waive(profile.Class(w))))
	}
	for _, s := range pf.seatbelt {
		opts = append(opts, flagged("seatbelt", s, profile.Seatbelt(s)))
	}
	p, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		var fe *flagError
		if errors.As(err, &fe) {
			return profile.Policy{}, usagef("--%s %q: %v", fe.flag, fe.value, fe.err)
		}
		return profile.Policy{}, usagef("%v", err)
	}
	return p, nil
}

func parseMode(s string) (profile.NetworkMode, error) {
	for _, m := range []profile.NetworkMode{profile.NetworkOff, profile.NetworkLoopback, profile.NetworkOn} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, usagef("--network %q: want off, loopback or on", s)
}

// flagError ties a policy error to the flag that caused it.
type flagError struct {
	flag, value string
	err         error
}

func (e *flagError) Error() string { return e.err.Error() }

// flagged wraps an option so its error names the flag. The option's own
// error already names the value; keep only its reason.
func flagged(name, value string, o profile.Option) profile.Option {
	return profile.Wrap(o, func(err error) error {
		var pe *profile.Error
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &flagError{flag: name, value: value, err: err}
	})
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}
