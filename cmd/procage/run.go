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
	"strings"
	"syscall"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve"
)

// Exit statuses for a command that never ran, as POSIX shells use them
// (POSIX.1-2017, Shell Command Language, 2.8.2 Exit Status for Commands).
const (
	exitCannotExecute = 126
	exitNotFound      = 127
)

func cmdRun(args []string, stdout, stderr io.Writer) (int, error) {
	var pf policyFlags
	var grants, grantsRW pathListFlag
	fs := newFlagSet("run", "run [policy flags] -- COMMAND [ARG...]", stdout)
	pf.register(fs)
	fs.Var(&grants, "grant", "bind `PATH` read-only to this run only, as a sandbox extension (repeatable)")
	fs.Var(&grantsRW, "grant-rw", "bind `PATH` read-write to this run only (repeatable)")
	privateTmp := fs.Bool("private-tmp", false, "give the run its own TMPDIR, removed when it ends")
	if err := fs.parse(args); err != nil {
		return 2, err
	}
	if fs.NArg() == 0 {
		return 2, usagef("missing COMMAND (procage run [flags] -- COMMAND [ARG...])")
	}
	for _, g := range grants {
		if !strings.HasPrefix(g, "/") {
			return 2, badValuef("--grant %q: path is not absolute", g)
		}
	}
	for _, g := range grantsRW {
		if !strings.HasPrefix(g, "/") {
			return 2, badValuef("--grant-rw %q: path is not absolute", g)
		}
	}
	// run cages on this host, so its paths are the host's.
	b := &backend{name: runtime.GOOS}
	if r, err := pathresolve.NewHost(); err == nil {
		b.resolver = r
	}
	c, err := prepare(&pf, fs, b, stderr, withPrivateTmp(*privateTmp)...)
	if err != nil {
		return 2, err
	}
	for _, g := range grantsRW {
		if g == "/" || g == c.Home() {
			fmt.Fprintf(stderr, "procage run: warning: --grant-rw %s: the target may change everything there the hard-deny classes do not protect\n", g)
		}
	}
	// Every signal that would end procage ends the run first. The run has
	// its own session, so a closed terminal or a dropped ssh connection
	// (SIGHUP) or SIGQUIT reaches procage only: dying of it would leave the
	// run running.
	ctx, stop := signal.NotifyContext(context.Background(), endSignals...)
	defer stop()
	cmd := c.Command(ctx, fs.Arg(0), fs.Args()[1:]...)
	if code, err := checkTarget(cmd); err != nil {
		return code, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	for _, g := range grants {
		cmd.Grants = append(cmd.Grants, cage.Grant{Path: g})
	}
	for _, g := range grantsRW {
		cmd.Grants = append(cmd.Grants, cage.Grant{Path: g, Write: true})
	}
	// The target may change the terminal it was given (stty -echo, an
	// editor killed mid-run); the caller's shell should not inherit that.
	defer restoreTerminal(os.Stdin)()
	err = cmd.Run()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Cancel ended the run: say which signal asked for it.
		if errors.Is(err, cage.ErrRunNotEnded) {
			return 1, fmt.Errorf("%v: %w", context.Cause(ctx), err)
		}
		return 1, fmt.Errorf("%v: the run was ended", context.Cause(ctx))
	}
	return exitStatus(err)
}

// endSignals end a run, then procage (exit status 1).
var endSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

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
// own status when it ran and failed, as a shell would pass it on; 127 or
// 126 when the caged child could not execute it.
func exitStatus(err error) (int, error) {
	var ee *exec.ExitError
	var ae *cage.ApplyError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal()), nil
		}
		return ee.ExitCode(), nil
	case errors.As(err, &ae) && ae.Step == cage.StepExec:
		if ae.Errno == syscall.ENOENT || ae.Errno == syscall.ENOTDIR {
			return exitNotFound, err
		}
		return exitCannotExecute, err
	case isBadInput(err):
		return 2, err
	}
	return 1, err
}

func withPrivateTmp(on bool) []cage.Option {
	if on {
		return []cage.Option{cage.WithPrivateTemp()}
	}
	return nil
}

// errCannotCage is probe's one line on stderr; the report on stdout says why.
var errCannotCage = errors.New("this host cannot cage processes")

func cmdProbe(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("probe", "probe [--json]", stdout)
	asJSON := fs.Bool("json", false, "print a JSON object (os_build, ok, apply, run_search) instead of text")
	if err := fs.parse(args); err != nil {
		return 2, err
	}
	if fs.NArg() > 0 {
		return 2, usagef("probe takes no arguments")
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
			OK        bool    `json:"ok"`
			Apply     *string `json:"apply"`
			RunSearch *string `json:"run_search"`
		}{r.OSBuild, !failed, errText(r.Apply), errText(r.RunSearch)}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return 1, err
		}
	} else {
		fmt.Fprintln(stdout, r)
	}
	if failed {
		return 2, errCannotCage
	}
	return 0, nil
}
