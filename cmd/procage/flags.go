package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
)

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// pathListFlag collects a repeatable path flag. A trailing slash, as shells
// complete a directory name, is dropped: /tmp/x/ is /tmp/x.
type pathListFlag []string

func (l *pathListFlag) String() string     { return strings.Join(*l, ",") }
func (l *pathListFlag) Set(s string) error { *l = append(*l, trimSlash(s)); return nil }

// shellQuote returns s as a shell would need it typed: unchanged when it
// has only characters no shell treats specially, single-quoted otherwise.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+@:,=%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func trimSlash(s string) string {
	if t := strings.TrimRight(s, "/"); t != "" {
		return t
	}
	return s
}

// policyFlags are the flags that describe a policy, shared by plan,
// explain and run.
type policyFlags struct {
	read, write, exec, sockets pathListFlag
	mach, waive, seatbelt      listFlag
	ports, acceptGaps          listFlag
	network, policyFile        string
	fork, execOnly, listenAny  bool
	limit                      int
}

// ruleFlags are the flags that write a policy's rules; --policy replaces
// them all.
var ruleFlags = []string{"read", "write", "exec", "network", "port", "listen-any", "unix-socket", "mach", "fork", "exec-target-only", "waive", "seatbelt"}

func (pf *policyFlags) register(fs *flagSet) {
	fs.Var(&pf.read, "read", "allow reading the tree at `PATH` (repeatable)")
	fs.Var(&pf.write, "write", "allow reading and writing the tree at `PATH` (repeatable)")
	fs.Var(&pf.exec, "exec", "allow reading and executing the tree at `PATH` (repeatable)")
	fs.StringVar(&pf.network, "network", "off", "network `MODE`: off, loopback (localhost, on the --port ports) or on (remote hosts; localhost only on the --port ports)")
	fs.Var(&pf.ports, "port", "with --network loopback or on, allow this localhost `PORT` (1-65535), or any for every port (repeatable; loopback needs one)")
	fs.BoolVar(&pf.listenAny, "listen-any", false, "with --network on, listen on every interface, not only localhost")
	fs.Var(&pf.sockets, "unix-socket", "allow connecting to the Unix socket at `PATH` (repeatable)")
	fs.Var(&pf.mach, "mach", "allow looking up the global Mach service `NAME` (repeatable)")
	fs.BoolVar(&pf.fork, "fork", false, "let the target create processes (a forking policy; make, shells and build tools need it)")
	fs.BoolVar(&pf.execOnly, "exec-target-only", false, "let the target execute no program but itself")
	fs.Var(&pf.waive, "waive", "lift the hard-deny `CLASS`: process-access, secrets, trust-handoff or service-manager (repeatable)")
	fs.Var(&pf.seatbelt, "seatbelt", "add a raw Seatbelt `RULE`, e.g. '(allow sysctl-read (sysctl-name \"kern.ostype\"))' (repeatable)")
	fs.Var(&pf.acceptGaps, "accept-gap", "Linux: leave the gap `NAME` unenforced instead of refusing the policy, e.g. trust-handoff-inside-writable-tree (repeatable; docs/linux-backend.md lists them)")
	fs.StringVar(&pf.policyFile, "policy", "", "read the policy from the JSON `FILE` (format: docs/policy.md) instead of rule flags")
	fs.IntVar(&pf.limit, "limit", seatbelt.DefaultLimit, "refuse profiles with more than `N` rules")
}

// policy builds the policy the flags describe. set reports which flags
// were given on the command line.
func (pf *policyFlags) policy(set map[string]bool) (profile.Policy, error) {
	if pf.limit < 1 {
		return profile.Policy{}, badValuef("--limit %d: must be at least 1", pf.limit)
	}
	if pf.policyFile != "" {
		for _, name := range ruleFlags {
			if set[name] {
				return profile.Policy{}, usagef("--policy and --%s: give the policy either as a file or as flags", name)
			}
		}
		return readPolicy(pf.policyFile)
	}
	var opts []profile.Option
	for _, p := range pf.read {
		opts = append(opts, flagged("--read "+shellQuote(p), profile.Read(p)))
	}
	for _, p := range pf.write {
		opts = append(opts, flagged("--write "+shellQuote(p), profile.ReadWrite(p)))
	}
	for _, p := range pf.exec {
		opts = append(opts, flagged("--exec "+shellQuote(p), profile.Exec(p)))
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
			return profile.Policy{}, badValuef("--port %q: not a number or any", s)
		}
		if n == 0 {
			// Once every port: that is asked for by name.
			return profile.Policy{}, badValuef("--port 0: not a port; use --port any for every port")
		}
		if n < 0 {
			// profile.AnyPort is negative: "any" is the only way to say it.
			return profile.Policy{}, badValuef("--port %q: not a port (1..65535) or any", s)
		}
		ports = append(ports, n)
	}
	where := "--network " + pf.network
	if len(ports) > 0 {
		where += " --port " + strings.Join(pf.ports, " --port ")
	}
	opts = append(opts, flagged(where, profile.Network(mode, ports...)))
	if pf.listenAny {
		opts = append(opts, flagged("--listen-any", profile.ListenAnyInterface()))
	}
	for _, p := range pf.sockets {
		opts = append(opts, flagged("--unix-socket "+shellQuote(p), profile.UnixSocket(p)))
	}
	for _, m := range pf.mach {
		opts = append(opts, flagged(fmt.Sprintf("--mach %q", m), profile.MachLookup(m)))
	}
	if pf.fork {
		opts = append(opts, profile.Fork())
	}
	if pf.execOnly {
		opts = append(opts, profile.ExecTargetOnly())
	}
	for _, w := range pf.waive {
		opts = append(opts, flagged(fmt.Sprintf("--waive %q", w), profile.Waive(profile.Class(w))))
	}
	for _, s := range pf.seatbelt {
		opts = append(opts, flagged(fmt.Sprintf("--seatbelt %q", s), profile.Seatbelt(s)))
	}
	p, err := profile.New(profile.BaseV1, opts...)
	var pe *profile.Error
	if errors.As(err, &pe) && fieldFlags[pe.Field] != "" {
		// A check across options names the JSON field; say the flag.
		return p, &inputError{where: fieldFlags[pe.Field], err: pe.Err}
	}
	return p, err
}

// fieldFlags are the flags behind the policy fields that checks across
// options name.
var fieldFlags = map[string]string{
	"network.mode": "--network", "network.ports": "--port", "network.listen_any": "--listen-any",
}

// readPolicy reads a JSON policy file. Its errors name the file, and the
// line and column where the JSON holds them.
func readPolicy(name string) (profile.Policy, error) {
	f, err := os.Open(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return profile.Policy{}, &inputError{where: "--policy " + name, err: err}
	}
	defer f.Close()
	p, err := profile.ParseJSON(f)
	if err != nil {
		where := name
		var pe *profile.Error
		if errors.As(err, &pe) && pe.Line > 0 {
			where = fmt.Sprintf("%s:%d:%d", name, pe.Line, pe.Column)
		}
		return profile.Policy{}, &inputError{where: where, err: err}
	}
	return p, nil
}

func parseMode(s string) (profile.NetworkMode, error) {
	for _, m := range []profile.NetworkMode{profile.NetworkOff, profile.NetworkLoopback, profile.NetworkOn} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, badValuef("--network %q: want off, loopback or on", s)
}

// flagged wraps an option so that its error names the flag and value the
// user gave. The option's own error names the value too; keep only its
// reason.
func flagged(where string, o profile.Option) profile.Option {
	return profile.Wrap(o, func(err error) error {
		var pe *profile.Error
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return &inputError{where: where, err: err}
	})
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// errHelp is returned after a command printed its --help.
var errHelp = errors.New("help requested")

// flagSet is a command's flags and its usage text.
type flagSet struct {
	*flag.FlagSet
	synopsis string
	stdout   io.Writer
}

// newFlagSet returns a flag set whose --help prints the usage to stdout,
// once, and whose errors come back to the caller unprinted.
func newFlagSet(name, synopsis string, stdout io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The flag package calls Usage on every parse error as well as on
	// --help; parse prints the usage for --help only.
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, synopsis: synopsis, stdout: stdout}
}

func (fs *flagSet) help() {
	fmt.Fprintf(fs.stdout, "Usage: procage %s\n\nFlags:\n", fs.synopsis)
	fs.SetOutput(fs.stdout)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// parse parses args. --help prints the usage and returns errHelp; a flag
// error is a usage error in procage's words.
func (fs *flagSet) parse(args []string) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.help()
		return errHelp
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return usagef("unknown flag --%s", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return usagef("flag --%s needs a value", name)
	}
	// invalid value "x" for flag -limit: parse error
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if val, name, ok := strings.Cut(rest, " for flag -"); ok {
			name, _, _ = strings.Cut(name, ":")
			return usagef("--%s %s: not a valid value", name, val)
		}
	}
	if rest, ok := strings.CutPrefix(msg, "invalid boolean value "); ok {
		if val, name, ok := strings.Cut(rest, " for -"); ok {
			name, _, _ = strings.Cut(name, ":")
			return usagef("--%s=%s: want true or false", name, val)
		}
	}
	return usagef("%s", msg)
}
