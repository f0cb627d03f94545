// Command procage shows and runs Seatbelt cages.
//
//	procage plan --read /usr/share --network loopback --port 8080   # print the profile and the path rewrites
//	procage explain --read /usr/share file-read-data /usr/share/dict/words
//	procage run --read /usr/share -- /bin/cat /usr/share/dict/words   # macOS only
//	procage probe                                          # macOS only
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

const usage = `procage runs commands in a macOS Seatbelt sandbox (a cage).

Usage:
  procage plan    [policy flags] [--json]           print the path rewrites and the Seatbelt profile
  procage explain [policy flags] OPERATION ARGUMENT  say whether the profile allows an access, and which rule decides
  procage run     [policy flags] -- COMMAND [ARG...] run COMMAND in the cage (macOS only)
  procage probe                                     check that this host can cage (macOS only)

Run 'procage COMMAND --help' for the flags of a command.
Exit status: 0 success (explain: allowed), 1 failure (explain: denied; run: the
command failed), 2 bad input or unsupported host.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	code := 0
	switch args[0] {
	case "plan":
		err = cmdPlan(args[1:], stdout, stderr)
	case "explain":
		code, err = cmdExplain(args[1:], stdout, stderr)
	case "run":
		code, err = cmdRun(args[1:], stdout, stderr)
	case "probe":
		err = cmdProbe(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "procage: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if errors.Is(err, errHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "procage %s: %v\n", args[0], err)
		var ue *usageError
		if errors.As(err, &ue) || errors.Is(err, errors.ErrUnsupported) {
			return 2
		}
		return 1
	}
	return code
}
