package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/procage-go/procage/cage"
)

func cmdRun(args []string, stdout, stderr io.Writer) (int, error) {
	var pf policyFlags
	var grants, grantsRW listFlag
	fs := newFlagSet("run", "run [policy flags] -- COMMAND [ARG...]", stdout)
	pf.register(fs)
	fs.Var(&grants, "grant", "bind `PATH` read-only to this run only, as a sandbox extension (repeatable)")
	fs.Var(&grantsRW, "grant-rw", "bind `PATH` read-write to this run only (repeatable)")
	privateTmp := fs.Bool("private-tmp", false, "give the run its own TMPDIR, removed when it ends")
	if err := parse(fs, args); err != nil {
		return 2, err
	}
	if fs.NArg() == 0 {
		return 2, usagef("missing COMMAND (procage run [flags] -- COMMAND [ARG...])")
	}
	c, err := prepare(&pf, fs, withPrivateTmp(*privateTmp)...)
	if err != nil {
		return 2, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := c.Command(ctx, fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	for _, g := range grants {
		cmd.Grants = append(cmd.Grants, cage.Grant{Path: g})
	}
	for _, g := range grantsRW {
		cmd.Grants = append(cmd.Grants, cage.Grant{Path: g, Write: true})
	}
	return exitStatus(cmd.Run())
}

// exitStatus maps a run's error to procage's exit status: the command's
// own status when it ran and failed, as a shell would pass it on.
func exitStatus(err error) (int, error) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 1, err
}

func withPrivateTmp(on bool) []cage.Option {
	if on {
		return []cage.Option{cage.WithPrivateTemp()}
	}
	return nil
}

func cmdProbe(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("probe", "probe", stdout)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("probe takes no arguments")
	}
	r := cage.Probe()
	fmt.Fprintln(stdout, r)
	if r.Apply != nil {
		return r.Apply
	}
	return r.Marker
}
