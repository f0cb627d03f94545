package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
	"github.com/procage-go/procage/profile/sim"
)

const demoSynopsis = `demo

Shows a cage at work on this host: the plan for a small policy (Base V1: the
system's programs, libraries and configuration; one writable temporary
directory, DIR; forking), then caged runs of /bin/sh under it, each with
what happened and (on Linux) what procage explain says about it. DIR is
removed at the end. Exit status: 0 when every run did what explain says
(on Linux; on macOS a disagreement is shown, not failed: the Seatbelt model
is not yet measured on a Mac), 1 when one did not, 125 when this host cannot
cage.`

// demoCheck is one caged run of the demo: a shell command and the access
// explain decides for it.
type demoCheck struct {
	what    string
	script  string
	op, arg string // explain's words, for --backend linux
	macOp   string // the Seatbelt operation, for --backend macos
	needs   string // a program the check runs, skipped where it is missing
}

func cmdDemo(args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlagSet("demo", demoSynopsis, stdout)
	if err := fs.parse(args); err != nil {
		return exitFailure, err
	}
	if fs.NArg() > 0 {
		return exitFailure, usagef("demo takes no arguments")
	}
	tmp, err := os.MkdirTemp("", "procage-demo-")
	if err != nil {
		return exitFailure, err
	}
	defer os.RemoveAll(tmp)
	dir, err := filepath.EvalSymlinks(tmp) // macOS: /var is /private/var
	if err != nil {
		return exitFailure, err
	}
	b, err := newBackend(defaultBackend())
	if err != nil {
		return exitFailure, err
	}
	p, err := profile.New(profile.BaseV1, profile.ReadWrite(dir), profile.Fork())
	if err != nil {
		return exitFailure, err
	}
	// Linux cannot keep git hooks out of a writable tree: DIR holds none.
	c, err := cage.New(p, cage.AcceptGaps(profile.GapTrustHandoff))
	if err != nil {
		return exitFailure, err
	}
	home := c.Home()
	short := func(s string) string {
		s = strings.ReplaceAll(s, dir, "DIR")
		if home != "" && home != "/" {
			s = strings.ReplaceAll(s, home, "~")
		}
		return s
	}
	fmt.Fprintf(stdout, "# procage demo: DIR is %s, ~ is %s\n", dir, home)
	fmt.Fprintf(stdout, "# the plan for Base V1, --write DIR --fork --accept-gap %s (procage plan prints the same):\n", profile.GapTrustHandoff)
	fmt.Fprint(stdout, c.Plan())
	if err := cage.Probe().Err(); err != nil {
		return exitFailure, err
	}
	passwd := kernelPath(b, "/etc/passwd")
	checks := []demoCheck{
		{what: "write a file in DIR", script: "echo hello > " + dir + "/hello", op: "create", arg: dir + "/hello", macOp: "file-write-create"},
		{what: "read a system file", script: "/bin/cat /etc/passwd > /dev/null", op: "read", arg: passwd, macOp: "file-read-data"},
		{what: "change a system file", script: ": >> /etc/passwd", op: "write", arg: passwd, macOp: "file-write-data"},
		{what: "list the home directory", script: "/bin/ls " + shellQuote(home) + " > /dev/null", op: "list", arg: home, macOp: "file-read-data", needs: home},
		{what: "make a user namespace", script: "/usr/bin/unshare -U /bin/true", op: "unshare", arg: "CLONE_NEWUSER", needs: "/usr/bin/unshare"},
		{what: "open a TCP connection", script: "exec 3<>/dev/tcp/127.0.0.1/9", op: "connect", arg: "127.0.0.1:9", macOp: "network-outbound", needs: "/bin/bash"},
	}
	fmt.Fprintf(stdout, "\n# caged runs of /bin/sh -c COMMAND under that plan: what happened, and procage explain's answer\n")
	code := 0
	for _, ch := range checks {
		if ch.needs != "" {
			if _, err := os.Stat(ch.needs); err != nil {
				continue
			}
		}
		shell := "/bin/sh"
		if ch.needs == "/bin/bash" {
			shell = "/bin/bash"
		}
		allowed, msg, err := demoRun(c, shell, ch.script)
		if err != nil {
			return exitFailure, err
		}
		predicted, text, known := demoExplain(c, ch)
		word := "refused"
		if allowed {
			word = "allowed"
		}
		fmt.Fprintf(stdout, "%s  %s: %s\n", word, ch.what, short(ch.script))
		if msg != "" {
			fmt.Fprintf(stdout, "         %s\n", short(msg))
		}
		if known {
			fmt.Fprintf(stdout, "         explain %s %s: %s\n", ch.op, short(ch.arg), short(text))
			// Linux's Decide is checked against the kernel
			// (TestLinuxDecideMatchesKernel), the Seatbelt model is not yet.
			if predicted != allowed {
				fmt.Fprintf(stdout, "         MISMATCH: the run and explain disagree\n")
				if c.LinuxPlan() != nil {
					code = 1
				}
			}
		}
	}
	return code, nil
}

// demoRun runs shell -c script in c and reports whether it succeeded, with
// the first line it wrote to standard error.
func demoRun(c *cage.Cage, shell, script string) (bool, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := c.Command(ctx, shell, "-c", script)
	var errb strings.Builder
	cmd.Stderr = &errb
	err := cmd.Run()
	if _, ok := errors.AsType[*exec.ExitError](err); err != nil && !ok {
		return false, "", err
	}
	msg, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n")
	return err == nil, msg, nil
}

// demoExplain is explain's answer for a check, where the plan can say.
func demoExplain(c *cage.Cage, ch demoCheck) (allowed bool, text string, known bool) {
	if pl := c.LinuxPlan(); pl != nil {
		a, err := linux.ParseAccess(ch.op, ch.arg)
		if err != nil {
			return false, "", false
		}
		d, err := pl.Decide(a)
		if err != nil {
			return false, "", false
		}
		return d.Allowed, d.String(), true
	}
	if pr := c.SeatbeltPlan(); pr != nil && ch.macOp != "" {
		a, err := sim.ParseAccess(ch.macOp, ch.arg)
		if err != nil {
			return false, "", false
		}
		d, err := sim.Decide(pr.Profile, a)
		if err != nil {
			return false, "", false
		}
		return d.Allowed, d.String(), true
	}
	return false, "", false
}
