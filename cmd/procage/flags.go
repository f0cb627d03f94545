package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve"
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

// durationFlag is a flag holding a time.Duration of 0 or more.
type durationFlag time.Duration

func (d *durationFlag) String() string { return time.Duration(*d).String() }
func (d *durationFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return errors.New("want a duration such as 90s, 5m or 1h30m")
	}
	*d = durationFlag(v)
	return nil
}

// shellQuote returns s as a shell would need it typed: unchanged when it
// has only characters no shell treats specially, single-quoted otherwise,
// and with a control character or invalid UTF-8 as $'...' (POSIX.1-2024
// dollar-single-quotes, also bash's and zsh's), so a message stays one
// line and shows every byte.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+@:,=%") == "" {
		return s
	}
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		var b strings.Builder
		b.WriteString("$'")
		for i := 0; i < len(s); {
			r, n := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && n == 1, r < 0x80 && unicode.IsControl(r):
				fmt.Fprintf(&b, `\x%02x`, s[i])
			case r == '\'' || r == '\\':
				b.WriteString(`\` + string(r))
			case unicode.IsControl(r):
				for _, c := range []byte(s[i : i+n]) {
					fmt.Fprintf(&b, `\x%02x`, c)
				}
			default:
				b.WriteString(s[i : i+n])
			}
			i += n
		}
		b.WriteString("'")
		return b.String()
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func trimSlash(s string) string {
	if t := strings.TrimRight(s, "/"); t != "" {
		return t
	}
	return s
}

// resolvePath makes the value of a path flag absolute, as the user meant
// it, before it reaches package cage (which takes absolute paths only): a
// leading ~ or ~/ is $HOME, as a shell expands it (but also in
// --read=~/x, where shells do not), and a relative path is taken from the
// working directory. Leading ".." elements climb from the kernel spelling
// of that directory (pwd -P), the directory the kernel means by "..". A
// ".." after a name is left in place, for the library to refuse as it
// refuses /a/../b: which directory it means depends on links the name may
// be. An absolute path is passed on as given, for the library's checks.
// where is the flag and value for an error message, with the resolved path
// when it differs.
func resolvePath(flagName, p string) (abs, where string, err error) {
	where = flagName + " " + shellQuote(p)
	if p == "" || strings.HasPrefix(p, "/") {
		return p, where, nil
	}
	var base, rel string
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		base, rel = os.Getenv("HOME"), p[1:]
		if !strings.HasPrefix(base, "/") {
			return "", "", badValuef("%s: $HOME is not an absolute path (%q), so ~ cannot be expanded", where, base)
		}
	case strings.HasPrefix(p, "~"):
		return "", "", badValuef("%s: only a leading ~ or ~/ is expanded (to $HOME); give the path in full", where)
	default:
		if base, err = os.Getwd(); err != nil {
			return "", "", &inputError{where: where, err: fmt.Errorf("working directory: %w", err)}
		}
		rel = p
	}
	up, names, dotdot := 0, []string{}, false
	for _, e := range strings.Split(rel, "/") {
		switch {
		case e == "" || e == ".":
		case e == ".." && len(names) == 0:
			up++
		default:
			dotdot = dotdot || e == ".."
			names = append(names, e)
		}
	}
	if up > 0 {
		if base, err = filepath.EvalSymlinks(base); err != nil {
			return "", "", &inputError{where: where, err: err}
		}
		for range up {
			base = filepath.Dir(base)
		}
	}
	abs = filepath.Join(base, strings.Join(names, "/"))
	if dotdot {
		abs = strings.TrimSuffix(base, "/") + "/" + strings.Join(names, "/")
	}
	return abs, where + " (" + abs + ")", nil
}

// absFlag is resolvePath for a flag whose value goes to package cage as
// is, checked as cage would check it: the error names the flag.
func absFlag(flagName, p string) (string, error) {
	abs, where, err := resolvePath(flagName, p)
	if err != nil {
		return "", err
	}
	if err := pathresolve.CheckAbs(abs); err != nil {
		if pe, ok := errors.AsType[*pathresolve.PathError](err); ok {
			err = pe.Err
		}
		return "", &inputError{where: where, err: err}
	}
	return abs, nil
}

// policyFlags are the flags that describe a policy, shared by plan,
// explain and run.
type policyFlags struct {
	read, write, exec, sockets pathListFlag
	mach, waive, seatbelt      listFlag
	ports, acceptGaps          listFlag
	allowHosts, denyHosts      listFlag
	allowAddrs                 listFlag
	acceptLinks                pathListFlag
	presets                    presetFlag
	network, policyFile, home  string
	tier                       string
	fork, execOnly, listenAny  bool
	limit                      int
}

// ruleFlags are the flags that write a policy's rules; --policy replaces
// them all.
var ruleFlags = []string{"read", "write", "exec", "network", "port", "listen-any", "allow-host", "deny-host", "allow-address", "unix-socket", "mach", "fork", "exec-target-only", "waive", "seatbelt"}

func (pf *policyFlags) register(fs *flagSet) {
	fs.Var(&pf.read, "read", "allow reading the tree at `PATH` (repeatable)")
	fs.Var(&pf.write, "write", "allow reading and writing the tree at `PATH` (repeatable)")
	fs.Var(&pf.exec, "exec", "allow reading and executing the tree at `PATH` (repeatable)")
	fs.StringVar(&pf.network, "network", "off", "network `MODE`: off, loopback (localhost, on the --port ports) or on (remote hosts; localhost only on the --port ports)")
	fs.Var(&pf.ports, "port", "with --network loopback or on, allow this localhost `PORT` (1-65535), or any for every port (repeatable; loopback needs one)")
	fs.BoolVar(&pf.listenAny, "listen-any", false, "with --network on, listen on every interface, not only localhost")
	fs.Var(&pf.allowHosts, "allow-host", "reach the host `PATTERN` (github.com, *.pythonhosted.org, optionally :PORT) through the run's egress proxy, and no other host (repeatable; docs/policy.md)")
	fs.Var(&pf.denyHosts, "deny-host", "with --allow-host, refuse the host `PATTERN` even where an --allow-host matches (repeatable)")
	fs.Var(&pf.allowAddrs, "allow-address", "with --allow-host, let the proxy reach the `ADDRESS` or prefix (127.0.0.1, 10.0.0.0/8, [::1]:8080), which a name resolving to a loopback, private or metadata address needs; this machine's own addresses only when named exactly, not by a prefix (repeatable)")
	fs.Var(&pf.sockets, "unix-socket", "allow connecting to the Unix socket at `PATH` (repeatable)")
	fs.Var(&pf.mach, "mach", "allow looking up the global Mach service `NAME` (repeatable)")
	fs.BoolVar(&pf.fork, "fork", false, "let the target create processes (a forking policy; make, shells and build tools need it)")
	fs.BoolVar(&pf.execOnly, "exec-target-only", false, "let the target execute no program but itself")
	fs.Var(&pf.waive, "waive", "lift the hard-deny `CLASS`: process-access, secrets, trust-handoff or service-manager (repeatable)")
	fs.Var(&pf.seatbelt, "seatbelt", "add a raw Seatbelt `RULE`, e.g. '(allow sysctl-read (sysctl-name \"kern.ostype\"))' (repeatable)")
	fs.Var(&pf.acceptGaps, "accept-gap", "Linux: leave the gap `NAME` unenforced instead of refusing the policy, e.g. trust-handoff-inside-writable-tree (repeatable; docs/linux-backend.md lists them)")
	fs.Var(&pf.acceptLinks, "accept-link", "accept policy paths and grants that resolve through the symbolic link at `PATH`, which a refusal names (repeatable): a link inside a granted tree leading out of it is what a link a caged run planted looks like")
	fs.Var(&pf.presets, "preset", presetUsage())
	fs.StringVar(&pf.home, "home", "", "protect `DIR` as the home directory the hard-deny classes guard (default: the user's home directory)")
	fs.StringVar(&pf.policyFile, "policy", "", "read the policy from the JSON `FILE` (format: docs/policy.md) instead of rule flags")
	fs.IntVar(&pf.limit, "limit", seatbelt.DefaultLimit, "refuse profiles with more than `N` rules")
	fs.StringVar(&pf.tier, "tier", "auto", "Linux: the enforcement `TIER`: auto (T1 where procage probe finds it works), t1 (namespaces and mounts too; refused where unavailable) or t2 (Landlock and seccomp only)")
}

// linuxTier reads --tier.
func (pf *policyFlags) linuxTier() (cage.LinuxTier, error) {
	switch strings.ToLower(pf.tier) {
	case "", "auto":
		return cage.TierAuto, nil
	case "t1":
		return cage.TierT1, nil
	case "t2":
		return cage.TierT2, nil
	}
	return 0, badValuef("--tier %q: want auto, t1 or t2", pf.tier)
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
		name := pf.policyFile
		if name == "~" || strings.HasPrefix(name, "~/") {
			abs, _, err := resolvePath("--policy", name)
			if err != nil {
				return profile.Policy{}, err
			}
			name = abs
		}
		return readPolicy(name)
	}
	var opts []profile.Option
	for _, f := range []struct {
		flag  string
		paths []string
		opt   func(string) profile.Option
	}{
		{"--read", pf.read, profile.Read},
		{"--write", pf.write, profile.ReadWrite},
		{"--exec", pf.exec, profile.Exec},
	} {
		for _, p := range f.paths {
			abs, where, err := resolvePath(f.flag, p)
			if err != nil {
				return profile.Policy{}, err
			}
			opts = append(opts, flagged(where, f.opt(abs)))
		}
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
	if mode == profile.NetworkLoopback && len(ports) == 0 {
		return profile.Policy{}, badValuef("--network loopback: name each localhost port it may use with --port N (or allow every port: --port any)")
	}
	where := "--network " + pf.network
	if len(ports) > 0 {
		where += " --port " + strings.Join(pf.ports, " --port ")
	}
	opts = append(opts, flagged(where, profile.Network(mode, ports...)))
	if pf.listenAny {
		opts = append(opts, flagged("--listen-any", profile.ListenAnyInterface()))
	}
	for _, f := range []struct {
		flag string
		vals []string
		opt  func(...string) profile.Option
	}{
		{"--allow-host", pf.allowHosts, profile.AllowHosts},
		{"--deny-host", pf.denyHosts, profile.DenyHosts},
		{"--allow-address", pf.allowAddrs, profile.AllowAddresses},
	} {
		for _, v := range f.vals {
			opts = append(opts, flagged(fmt.Sprintf("%s %q", f.flag, v), f.opt(v)))
		}
	}
	for _, p := range pf.sockets {
		abs, where, err := resolvePath("--unix-socket", p)
		if err != nil {
			return profile.Policy{}, err
		}
		opts = append(opts, flagged(where, profile.UnixSocket(abs)))
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
	"network.allow_hosts": "--allow-host",
}

// readPolicy reads a JSON policy file, or the output of plan --json
// saved as it is (its "policy" object is the policy). Its errors name the
// file, and the line and column where the JSON holds them.
func readPolicy(name string) (profile.Policy, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return profile.Policy{}, &inputError{where: "--policy " + name, err: err}
	}
	var saved struct {
		Backend string          `json:"backend"`
		Policy  json.RawMessage `json:"policy"`
	}
	if json.Unmarshal(b, &saved) == nil && saved.Backend != "" && len(saved.Policy) > 0 {
		p, err := profile.ParseJSON(bytes.NewReader(saved.Policy))
		if err != nil {
			return profile.Policy{}, &inputError{where: name + ` ("policy", as plan --json wrote it)`, err: err}
		}
		return p, nil
	}
	p, err := profile.ParseJSON(bytes.NewReader(b))
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
	// invalid value "x" for flag -limit: parse error; a flag.Value's own
	// reason is kept.
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if val, name, ok := strings.Cut(rest, " for flag -"); ok {
			name, reason, _ := strings.Cut(name, ": ")
			if reason == "" || reason == "parse error" || reason == "value out of range" {
				reason = "not a valid value"
			}
			return usagef("--%s %s: %s", name, val, reason)
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
