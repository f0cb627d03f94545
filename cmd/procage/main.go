// Command procage shows and runs sandboxed commands (cages).
//
//	procage plan --backend macos --read /usr/share --network loopback --port 8080   # print the path rewrites and the Seatbelt profile
//	procage explain --read /usr/share read /usr/share/dict/words   # the host's backend: Landlock rules on Linux
//	procage explain --backend linux --fork clone SIGCHLD  # a system call as seccomp sees it
//	procage run --read /usr/share -- /bin/ls /usr/share   # macOS and Linux
//	procage run --read . --env LANG=C --timeout 1m -- /bin/ls .   # a relative path, a variable of its own, a time limit
//	procage probe                                         # can this host cage, with which sandbox?
//	procage demo                                          # a plan, and what caged runs under it may and may not do
//	procage --version
//
// plan always prints the plan: on Linux a policy with gaps run would
// refuse is printed too, exit status 0, each gap marked with the
// --accept-gap that accepts it, and a warning on standard error. A path
// in plan's header lines or in a Linux plan that is not plain text is
// quoted as a Go string literal, and a policy path with a control
// character is refused, so no path can forge a line of a saved plan.
//
// Help goes to standard output with exit status 0. An error is one line
// on standard error, naming what is wrong and, where procage knows it,
// the flag that would fix it; nothing is written to standard output.
// Exit statuses follow env(1), timeout(1) and docker run: 125 when procage
// itself fails (bad input, a refused policy, a host that cannot cage), in
// every command. procage run exits with the command's own status, 128+N
// when the command died of signal N, 127 when it cannot be found and 126
// when it cannot be executed (as shells do), and 124 when --timeout ended
// it. SIGINT, SIGTERM, SIGHUP and SIGQUIT end the run (every process of
// it), then procage, with exit status 128 plus the signal's number (130,
// 143, 129, 131); procage run puts back the terminal settings its standard
// input had when the run changed them. explain exits 0 for an allowed
// access and 1 for a denied one; probe 0 when the host can cage and 1 when
// it cannot.
//
// It is an example tool built on package cage; its flags and output carry
// no compatibility guarantee.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

const usage = `procage runs commands in a sandbox (a cage): Seatbelt on macOS,
Landlock and seccomp on Linux.

Usage:
  procage plan    [policy flags] [--backend OS] [--json]         print the path rewrites and the plan (macos: the Seatbelt profile)
  procage explain [policy flags] [--backend OS] [--json] OP ARG  say whether the plan allows an access, and which rule decides
  procage run     [policy flags] [run flags] -- COMMAND [ARG...] run COMMAND in the cage (macOS and Linux)
  procage probe   [--json]                                       check that this host can cage, and name its sandbox
  procage demo                                                   show a plan and caged runs under it on this host
  procage --version                                              print procage's version

Run 'procage COMMAND --help' for the flags of a command (run adds --env,
--env-allow, --timeout, --grant and --private-tmp). Path flags take
absolute paths, paths relative to the working directory and ~/...
--backend macos previews what a Mac would get from any OS (off macOS,
against a simulated Mac file system); a policy file's format is in
docs/policy.md.
Exit status: 0 success; 125 procage failed (bad input, a refused policy,
a host that cannot cage); explain: 1 denied; probe: 1 this host cannot
cage; run: the command's own status, 128+N if it died of signal N, 126 if
it cannot be executed, 127 if it cannot be found, 124 if --timeout ended
the run, 128+N if signal N (SIGINT, SIGTERM, SIGHUP, SIGQUIT) to procage
ended it.
`

// exitFailure is the exit status of every failure of procage itself, as
// env(1), timeout(1) and docker run use it: a command's own status is
// seldom 125, so a script can tell the two apart.
const exitFailure = 125

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is procage with args (without the program name): it returns the exit
// status. Tests call it in-process.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "procage: missing command; see 'procage --help'\n")
		return exitFailure
	}
	name := args[0]
	var err error
	code := 0
	switch name {
	case "plan":
		err = cmdPlan(args[1:], stdout, stderr)
	case "explain":
		code, err = cmdExplain(args[1:], stdout, stderr)
	case "run":
		code, err = cmdRun(args[1:], stdout, stderr)
	case "probe":
		code, err = cmdProbe(args[1:], stdout, stderr)
	case "demo":
		code, err = cmdDemo(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, "procage", version(readBuildInfo))
		return 0
	default:
		fmt.Fprintf(stderr, "procage: unknown command %q; see 'procage --help'\n", name)
		return exitFailure
	}
	if err == nil {
		return code
	}
	if errors.Is(err, errHelp) {
		return 0
	}
	fmt.Fprintf(stderr, "procage %s: %s\n", name, describe(err))
	var ue *usageError
	if errors.As(err, &ue) && ue.hint {
		fmt.Fprintf(stderr, "see 'procage %s --help'\n", name)
	}
	if code != 0 {
		return code
	}
	return exitFailure
}
