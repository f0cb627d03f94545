package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve"
)

// Exit statuses for a command that never ran, as POSIX shells use them
// (POSIX.1-2017, Shell Command Language, 2.8.2 Exit Status for Commands).
const (
	exitCannotExecute = 126
	exitNotFound      = 127
)

// Exit statuses of a run that procage ended, as timeout(1) and shells
// report them.
const (
	exitTimedOut = 124 // --timeout ended the run (timeout(1))
	exitSignaled = 128 // plus N: signal N ended the command or the run
)

func cmdRun(args []string, stdout, stderr io.Writer) (code int, err error) {
	var pf policyFlags
	var grants, grantsRW pathListFlag
	var envs, envAllow listFlag
	var timeout durationFlag
	fs := newFlagSet("run", "run [policy flags] [--env KEY=VALUE] [--timeout DURATION] -- COMMAND [ARG...]\n\n"+
		"Runs COMMAND in the cage. Exit status: the command's own, 128+N if it died of\n"+
		"signal N, 126 if it cannot be executed, 127 if it cannot be found, 124 if\n"+
		"--timeout ended the run, 128+N if signal N to procage ended it, 125 if procage\n"+
		"failed (bad input, a refused policy, a host that cannot cage).", stdout)
	pf.register(fs)
	fs.Var(&grants, "grant", "bind `PATH` read-only to this run only, as a sandbox extension (repeatable)")
	fs.Var(&grantsRW, "grant-rw", "bind `PATH` read-write to this run only (repeatable)")
	privateTmp := fs.Bool("private-tmp", false, "give the run its own TMPDIR, removed when it ends")
	fs.Var(&envs, "env", "set the variable `KEY=VALUE` in the command's environment (repeatable)")
	fs.Var(&envAllow, "env-allow", "pass the command only the variable `NAME` of procage's environment and those other --env-allow flags name (repeatable; default: every variable but secret-looking ones)")
	fs.Var(&timeout, "timeout", "end the run (every process of it) after `DURATION`, such as 90s, 5m or 1h30m, and exit 124, as timeout(1) does")
	netLog := fs.Bool("net-log", false, "with --allow-host, print each request of the run's egress proxy to stderr when the run ends (procage run: net: allowed GET github.com:443 by github.com ...)")
	netJSON := fs.Bool("json", false, "with --net-log, print the record as one line of JSON on stderr ({\"net_log\": [...]}, docs/policy.md) instead of text")
	if err := fs.parse(args); err != nil {
		return exitFailure, err
	}
	if *netJSON && !*netLog {
		return exitFailure, usagef("--json prints the --net-log record: add --net-log")
	}
	if fs.NArg() == 0 {
		return exitFailure, usagef("missing COMMAND (procage run [flags] -- COMMAND [ARG...])")
	}
	for _, kv := range envs {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" || strings.ContainsRune(kv, 0) {
			return exitFailure, badValuef("--env %s: want KEY=VALUE, e.g. --env LANG=C.UTF-8", shellQuote(kv))
		}
	}
	for _, name := range envAllow {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return exitFailure, badValuef("--env-allow %s: want a variable name, e.g. --env-allow PATH", shellQuote(name))
		}
	}
	var cageGrants []cage.Grant
	for _, g := range []struct {
		flag  string
		paths []string
		write bool
	}{{"--grant", grants, false}, {"--grant-rw", grantsRW, true}} {
		for _, p := range g.paths {
			abs, err := absFlag(g.flag, p)
			if err != nil {
				return exitFailure, err
			}
			cageGrants = append(cageGrants, cage.Grant{Path: abs, Write: g.write})
		}
	}
	// run cages on this host, so its paths are the host's.
	b := &backend{name: runtime.GOOS}
	if r, err := pathresolve.NewHost(); err == nil {
		b.resolver = r
	}
	opts := withPrivateTmp(*privateTmp)
	if len(envAllow) > 0 {
		opts = append(opts, cage.WithEnvAllowlist(envAllow...))
	}
	c, err := prepare(&pf, fs, b, stderr, opts...)
	if err != nil {
		return exitFailure, err
	}
	defer func() {
		// The presets' caches, which the cage's runs share.
		if cerr := c.Close(); cerr != nil {
			code, err = exitFailure, errors.Join(err, cerr)
		}
	}()
	for _, g := range cageGrants {
		if g.Write && (g.Path == "/" || g.Path == c.Home()) {
			fmt.Fprintf(stderr, "procage run: warning: --grant-rw %s: the target may change everything there the hard-deny classes do not protect\n", g.Path)
		}
	}
	ctx, stop := runContext(time.Duration(timeout))
	defer stop()
	cmd := c.Command(ctx, fs.Arg(0), fs.Args()[1:]...)
	if code, err := checkTarget(cmd); err != nil {
		return code, err
	}
	if len(envs) > 0 {
		cmd.Env = setEnv(dropCaches(cmd.Environ(), pf.presets), envs, *privateTmp || len(pf.presets) > 0)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Grants = cageGrants
	// The target may change the terminal it was given (stty -echo, an
	// editor killed mid-run); the caller's shell should not inherit that.
	defer restoreTerminal(os.Stdin)()
	err = cmd.Run()
	switch {
	case *netJSON:
		if jerr := writeNetLogJSON(stderr, cmd.NetLog(), cmd.NetLogDropped()); jerr != nil && err == nil {
			err = jerr
		}
	case *netLog:
		for _, r := range cmd.NetLog() {
			fmt.Fprintf(stderr, "procage run: net: %s\n", r)
		}
		if d := cmd.NetLogDropped(); d.Records > 0 || d.Conns > 0 {
			fmt.Fprintf(stderr, "procage run: net: %d requests not recorded (the record keeps %d), %d connections closed unserved (more than %d open at once)\n", d.Records, cage.NetMaxRecords, d.Conns, cage.NetMaxConns)
		}
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// A signal or the timeout ended the run: say which.
		cause := context.Cause(ctx)
		if errors.Is(err, cage.ErrRunNotEnded) || errors.Is(err, cage.ErrTempNotRemoved) {
			return exitFailure, fmt.Errorf("%v: %s", cause, describeLines(err, context.Canceled, context.DeadlineExceeded))
		}
		var es *endSignal
		if errors.As(cause, &es) {
			return exitSignaled + es.signo, fmt.Errorf("%v: the run was ended", cause)
		}
		return exitTimedOut, fmt.Errorf("%v: the run was ended", cause)
	}
	if hint := failedRunHint(c, b, &pf, cmd, err); hint != "" {
		fmt.Fprintf(stderr, "procage run: hint: %s\n", hint)
	}
	return exitStatus(c, b, &pf, cmd, err)
}

// endSignals end a run, then procage (exit status 128 plus the signal's
// number). The run has its own session, so a closed terminal or a dropped
// ssh connection (SIGHUP) or SIGQUIT reaches procage only: dying of it
// would leave the run running.
var endSignals = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// signalNames are the endSignals' names, as kill -l spells them.
var signalNames = map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP", syscall.SIGQUIT: "SIGQUIT"}

// endSignal is the cause of a run ended by a signal to procage.
type endSignal struct{ signo int }

func (e *endSignal) Error() string {
	return fmt.Sprintf("%s (signal %d) received", signalNames[syscall.Signal(e.signo)], e.signo)
}

// timedOut is the cause of a run ended by --timeout.
type timedOut struct{ after time.Duration }

func (e *timedOut) Error() string { return fmt.Sprintf("timed out after %v (--timeout)", e.after) }

// runContext returns the context a run is started with: cancelled, with an
// *endSignal cause, by the first of endSignals procage receives, and after
// timeout (0: never) with a *timedOut cause. stop stops both.
func runContext(timeout time.Duration) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	sigs := make([]os.Signal, len(endSignals))
	for i, s := range endSignals {
		sigs[i] = s
	}
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			n, _ := sig.(syscall.Signal)
			cancel(&endSignal{signo: int(n)})
		case <-done:
		}
	}()
	cancelTimeout := func() {}
	if timeout > 0 {
		ctx, cancelTimeout = context.WithTimeoutCause(ctx, timeout, &timedOut{after: timeout})
	}
	return ctx, func() {
		// Until here every end signal is caught, including a second one
		// while the run is being ended.
		signal.Stop(ch)
		close(done)
		cancelTimeout()
		cancel(nil)
	}
}

// setEnv returns env with each KEY=VALUE of sets in place of the variable
// of that name. Without a TMPDIR of sets, a run with its own TMPDIR does
// not get the caller's: an explicit environment naming TMPDIR would keep
// the private one out (cage.WithPrivateTemp).
func setEnv(env, sets []string, privateTmp bool) []string {
	drop := func(k string) {
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
	}
	if privateTmp {
		drop("TMPDIR")
	}
	for _, kv := range sets {
		k, _, _ := strings.Cut(kv, "=")
		drop(k)
		env = append(env, kv)
	}
	return env
}

// checkTarget fails a command that cannot be found (127) or executed (126)
// before any cage is involved, as a shell would, so the status is the same
// on every OS. The caged child checks again when it executes the target.
func checkTarget(cmd *cage.Cmd) (int, error) {
	if cmd.Err != nil {
		if errors.Is(cmd.Err, exec.ErrNotFound) || errors.Is(cmd.Err, fs.ErrNotExist) {
			return exitNotFound, &inputError{where: cmd.Args[0], err: errors.New("command not found")}
		}
		err := cmd.Err
		var ee *exec.Error
		if errors.As(err, &ee) {
			err = ee.Err // the name is said once, first
		}
		return exitCannotExecute, &inputError{where: cmd.Args[0], err: err}
	}
	fi, err := os.Stat(cmd.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return exitNotFound, &inputError{where: cmd.Path, err: errors.New("no such file")}
	case err != nil:
		return exitCannotExecute, &inputError{where: cmd.Path, err: err}
	case fi.IsDir():
		return exitCannotExecute, &inputError{where: cmd.Path, err: errors.New("is a directory")}
	case fi.Mode()&0o111 == 0:
		return exitCannotExecute, &inputError{where: cmd.Path, err: errors.New("not executable")}
	}
	return 0, nil
}

// exitStatus maps a run's error to procage's exit status: the command's
// own status when it ran and failed, as a shell would pass it on (128+N
// for signal N); 127 or 126 when the caged child could not execute it;
// 125 for a failure of procage, including a run that may not have ended
// or left its private TMPDIR behind, whatever the command's status.
func exitStatus(c *cage.Cage, b *backend, pf *policyFlags, cmd *cage.Cmd, err error) (int, error) {
	var ee *exec.ExitError
	var ae *cage.ApplyError
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, cage.ErrRunNotEnded) || errors.Is(err, cage.ErrTempNotRemoved):
		return exitFailure, errors.New(describeLines(err))
	case errors.As(err, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return exitSignaled + int(st.Signal()), nil
		}
		return ee.ExitCode(), nil
	case errors.As(err, &ae) && ae.Step == cage.StepExec:
		if ae.Errno == syscall.ENOENT || ae.Errno == syscall.ENOTDIR {
			return exitNotFound, err
		}
		if errors.Is(ae, fs.ErrPermission) {
			return exitCannotExecute, execDenied(c, b, pf, cmd, ae)
		}
		return exitCannotExecute, err
	}
	return exitFailure, err
}

func withPrivateTmp(on bool) []cage.Option {
	if on {
		return []cage.Option{cage.WithPrivateTemp()}
	}
	return nil
}

// exitCannotCage is probe's exit status for a host that cannot cage.
const exitCannotCage = 1

// errCannotCage is probe's one line on stderr; the report on stdout says why.
var errCannotCage = errors.New("this host cannot cage processes")

func cmdProbe(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("probe", "probe [--json]\n\nChecks that this host can cage processes and names its sandbox (Seatbelt on\nmacOS, Landlock+seccomp on Linux): a child under a sandbox that denies\neverything must be refused exec of its target; on macOS the run-marker query\nthat finds a forking run's processes must work too. On Linux it names the\ntier a cage gets (T1: namespaces and mounts too, \"without /proc\" where the\nrun's own /proc mount is refused; T2: Landlock and seccomp only, with the T1\nstep that failed), whether T1 runs supervise new names (the trust-handoff\ngap for .git closes; where not, why), and checks the default policy fits the\nkernel's Landlock ABI. Exit status: 0 it can, 1 it cannot, 125 bad input or another failure.", stdout)
	asJSON := fs.Bool("json", false, "print a JSON object (os_build, sandbox, ok, apply, run_search, tier, t1_unavailable, t1_without_proc, new_names_unsupervised, default_policy_refused) instead of text")
	if err := fs.parse(args); err != nil {
		return exitFailure, err
	}
	if fs.NArg() > 0 {
		return exitFailure, usagef("probe takes no arguments")
	}
	r := cage.Probe()
	failed := r.Apply != nil || r.RunSearch != nil
	if *asJSON {
		errText := func(err error) *string {
			if err == nil {
				return nil
			}
			s := describe(err)
			return &s
		}
		out := struct {
			OSBuild   string  `json:"os_build"`
			Sandbox   string  `json:"sandbox"`
			OK        bool    `json:"ok"`
			Apply     *string `json:"apply"`
			RunSearch *string `json:"run_search"`
			Tier      string  `json:"tier,omitempty"`
			T1        *string `json:"t1_unavailable,omitempty"`
			Proc      *string `json:"t1_without_proc,omitempty"`
			NewNames  *string `json:"new_names_unsupervised,omitempty"`
			Policy    *string `json:"default_policy_refused,omitempty"`
		}{r.OSBuild, r.Sandbox, !failed, errText(r.Apply), errText(r.RunSearch), r.Tier, errText(r.T1), errText(r.Proc), errText(r.NewNames), errText(r.Policy)}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return exitFailure, err
		}
	} else {
		fmt.Fprintln(stdout, r)
	}
	if failed {
		return exitCannotCage, errCannotCage
	}
	return 0, nil
}
