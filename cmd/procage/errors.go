package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
	"github.com/procage-go/procage/profile/sim"
)

// usageError is bad input found by procage itself (a flag, an argument, a
// value). hint adds a "see --help" line: the command line's shape is wrong.
type usageError struct {
	msg  string
	hint bool
}

func (e *usageError) Error() string { return e.msg }

// usagef is a bad command line: the message and a pointer to --help.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...), hint: true}
}

// badValuef is a bad value in well-formed input.
func badValuef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// inputError ties an error in the user's input to where it was given: a
// flag ("--read /x"), a file ("p.json:3:5"). The message shows that place
// once, followed by the cause in plain words.
type inputError struct {
	where string
	err   error
}

func (e *inputError) Error() string { return e.where + ": " + describe(e.err) }
func (e *inputError) Unwrap() error { return e.err }

// describe renders err in plain words for one line of standard error: the
// user's input first, then what is wrong with it, without the package
// prefixes (cage:, profile:, ...) that wrapping piles up.
func describe(err error) string {
	var (
		ie  *inputError
		pe  *profile.Error
		pol *cage.PolicyError
		re  *pathresolve.PathError
		ue  *cage.UnsupportedError
	)
	switch {
	case errors.As(err, &ie):
		return ie.Error()
	case errors.As(err, &pol):
		return describePolicy(pol)
	case errors.As(err, &pe):
		s := pe.Field
		if pe.Value != "" {
			s += fmt.Sprintf(" %q", pe.Value)
		}
		if s == "" {
			return describe(pe.Err)
		}
		return s + ": " + describe(pe.Err)
	case errors.As(err, &re):
		if re.Component != "" && re.Component != re.Path {
			return fmt.Sprintf("%q: at %q: %s", re.Path, re.Component, firstClause(re.Err))
		}
		return fmt.Sprintf("%q: %s", re.Path, firstClause(re.Err))
	case errors.As(err, &ue):
		s := fmt.Sprintf("unsupported on %s: %s", ue.OSBuild, ue.What)
		if ue.Err != nil {
			// The cause names what failed: the T1 step and its errno.
			s += ": " + describe(ue.Err)
		}
		return s
	case errors.Is(err, errors.ErrUnsupported):
		return strings.TrimSuffix(stripPrefixes(err.Error()), ": "+errors.ErrUnsupported.Error())
	case errors.Is(err, sim.ErrAccess):
		// "file-read-data "x": want an absolute path", without the
		// sentinel's own words repeated at the end.
		return strings.TrimSuffix(stripPrefixes(err.Error()), ": "+sim.ErrAccess.Error())
	case errors.Is(err, linux.ErrAccess):
		return strings.TrimSuffix(stripPrefixes(err.Error()), ": "+linux.ErrAccess.Error())
	case errors.Is(err, sim.ErrOperation):
		return firstClause(err)
	}
	return describeLines(err)
}

// describePolicy renders a policy the cage refused, by kind.
func describePolicy(pol *cage.PolicyError) string {
	switch pol.Kind {
	case cage.ErrGap:
		return describeGaps(pol.Gaps)
	case cage.ErrSuspectLink:
		return describeLink(pol)
	case cage.ErrCaseSensitive:
		if ce, ok := errors.AsType[*pathresolve.CaseSensitiveError](pol); ok {
			return fmt.Sprintf("%q is on a case-sensitive volume (%s), where Seatbelt's case-insensitive rules would also allow other files", ce.Path, ce.Volume)
		}
	}
	return stripPrefixes(pol.Error())
}

// describeGaps names each part of a refused Linux policy (which path,
// inside what) and the flags that would let it run: accepting the gap, or
// waiving the hard-deny class it is about.
func describeGaps(refused []profile.GapPart) string {
	var parts, gaps, classes []string
	for _, p := range refused {
		parts = append(parts, string(p.Gap)+": "+p.Detail)
		if g := "--accept-gap " + string(p.Gap); !slices.Contains(gaps, g) {
			gaps = append(gaps, g)
		}
		if c := "--waive " + string(p.Class); p.Class != "" && !slices.Contains(classes, c) {
			classes = append(classes, c)
		}
	}
	fix := "to run it unenforced: " + strings.Join(gaps, " ")
	if len(classes) > 0 {
		fix += "; or give up the protection: " + strings.Join(classes, " ")
	}
	return "linux cannot enforce " + strings.Join(parts, "; ") + " (" + fix + ")"
}

// describeLines renders an error of several lines (errors.Join: a run's
// exit status with what ending it found) as one, each line without its
// package prefixes, leaving out the lines of the drop errors (the
// context's error of a run a signal ended, which the message says better).
func describeLines(err error, drop ...error) string {
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if !slices.ContainsFunc(drop, func(d error) bool { return l == d.Error() }) {
			out = append(out, stripPrefixes(l))
		}
	}
	return strings.Join(out, "; ")
}

// firstClause drops the advice some sentinel errors carry after a
// semicolon: the CLI's message names the input instead.
func firstClause(err error) string {
	s := stripPrefixes(err.Error())
	if i := strings.Index(s, "; "); i > 0 {
		s = s[:i]
	}
	return s
}

// packagePrefixes are the prefixes procage's packages put on their error
// strings; in a CLI message they say nothing the user can act on.
var packagePrefixes = []string{"cage: ", "profile: ", "seatbelt: ", "linux: ", "pathresolve: ", "sim: ", "sbpl: ", "forkexec: ", "libsandbox: "}

// stripPrefixes removes package prefixes at the start of s and after each
// ": " separator.
func stripPrefixes(s string) string {
	parts := strings.Split(s, ": ")
	out := parts[:0]
	for _, p := range parts {
		name := p + ": "
		if isPrefix(name) {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}

func isPrefix(s string) bool {
	for _, p := range packagePrefixes {
		if s == p {
			return true
		}
	}
	return false
}
