package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/procage-go/procage/profile/sbpl"
	"github.com/procage-go/procage/profile/sim"
)

const explainProfileSynopsis = `explain --profile FILE [--param NAME=VALUE]... OPERATION ARGUMENT

Says whether the SBPL profile in FILE, exactly as written (no procage layers),
allows OPERATION on ARGUMENT, and names the deciding rule by its line in FILE,
using procage's model of Seatbelt (nothing runs). FILE may use the Scheme
hand-written profiles do: (define NAME VALUE), and (if (param "K") ...),
(when ...), (unless ...), (begin ...) decided by the --param values; not
import. ARGUMENT is read as for
explain without --profile, and is taken as the kernel spells it (no symbolic
link resolution). Where a reading of Seatbelt that macOS has not been
measured to follow would decide otherwise, a note names it. Exit status: 0 allowed, 1 denied, 125 bad
input or undecidable (a rule the model cannot evaluate could decide).`

// wantsProfile reports whether explain's arguments ask for --profile
// (before any "--").
func wantsProfile(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "profile" {
			return true
		}
	}
	return false
}

// cmdExplainProfile is explain --profile.
func cmdExplainProfile(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var file string
	var params listFlag
	fs.StringVar(&file, "profile", "", "decide with the SBPL profile in `FILE`")
	fs.Var(&params, "param", "bind (param \"NAME\") to VALUE, as sandbox-exec -D does (`NAME=VALUE`, repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: procage %s\n\nFlags:\n", explainProfileSynopsis)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0, errHelp
		}
		return exitFailure, usagef("%v", err)
	}
	if file == "" {
		return exitFailure, usagef("--profile: want a file")
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		return exitFailure, usagef("want OPERATION and ARGUMENT, e.g. explain --profile my.sb file-read-data /usr/lib/libc.dylib")
	}
	access, err := sim.ParseAccess(fs.Arg(0), fs.Arg(1))
	if err != nil {
		return exitFailure, usagef("%v", err)
	}
	for _, kv := range params {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return exitFailure, usagef("--param %q: want NAME=VALUE", kv)
		}
		if access.Params == nil {
			access.Params = map[string]string{}
		}
		access.Params[k] = v
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return exitFailure, usagef("--profile: %v", err)
	}
	prof, lines, err := sbpl.ReadProfile(string(src), access.Params)
	if err != nil {
		return exitFailure, usagef("%s: %v", file, err)
	}
	at := func(i int) string { return fmt.Sprintf("%s:%d", file, lines[i]) }
	d, err := sim.Decide(prof, access)
	var re *sim.RuleError
	if errors.As(err, &re) && re.Index >= 0 && re.Index < len(lines) {
		return exitFailure, usagef("%s: %s: %v", at(re.Index), re.Rule, re.Err)
	}
	if err != nil {
		return exitFailure, usagef("%v", err)
	}
	verdict := "denied"
	if d.Allowed {
		verdict = "allowed"
	}
	if d.Rule < 0 {
		fmt.Fprintf(stdout, "%s by default (no rule covers %s)\n", verdict, d.Op)
	} else {
		fmt.Fprintf(stdout, "%s by %s: %s\n", verdict, at(d.Rule), d.Text)
	}
	// Where a reading of Seatbelt macOS has not been measured to follow
	// decides otherwise, say so, with the rule it would pick.
	flipped := 0
	for _, v := range sim.Alternatives() {
		vd, err := v.Decide(prof, access)
		if err != nil || vd.Allowed == d.Allowed {
			continue
		}
		flipped++
		verdict := "denied"
		if vd.Allowed {
			verdict = "allowed"
		}
		by := "by default"
		if vd.Rule >= 0 {
			by = "by " + at(vd.Rule)
		}
		fmt.Fprintf(stdout, "; unsettled: if Seatbelt follows %s, %s %s\n", v, verdict, by)
	}
	if flipped == 0 {
		for _, v := range sim.Variants()[1:] {
			if vd, err := v.Decide(prof, access); err == nil && vd.Allowed != d.Allowed {
				fmt.Fprintf(stdout, "; unsettled: if Seatbelt follows %s, %s\n", v, map[bool]string{true: "allowed", false: "denied"}[vd.Allowed])
				break
			}
		}
	}
	if !d.Allowed {
		return 1, nil
	}
	return 0, nil
}
