package sim

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// ErrRegex is wrapped by every error for a Seatbelt regex the simulator
// cannot translate to Go's regexp faithfully.
var ErrRegex = errors.New("regex cannot be translated")

// RegexError reports a Seatbelt regex that cannot be translated.
type RegexError struct {
	Pattern string
	Reason  string
}

func (e *RegexError) Error() string {
	return fmt.Sprintf("sim: regex %q: %s", e.Pattern, e.Reason)
}
func (e *RegexError) Unwrap() error { return ErrRegex }

// TranslateRegex turns a Seatbelt regex into Go regexp syntax.
//
// Seatbelt regexes are POSIX extended regular expressions, unanchored unless
// they start with "^". "(?i)" and other Perl groups fail to compile in
// libsandbox ("unexpected ^ operator in middle of expression") [reported:
// constellation-works/orbit#495, measured], so they are
// rejected here too. What the simulator cannot translate without guessing
// is rejected rather than approximated:
//   - "^" anywhere but at the start of the pattern or of a group or branch;
//   - a backslash before a letter or digit (\d, \w, \1: not POSIX ERE);
//   - a backslash inside a bracket expression (literal in POSIX, an escape
//     in Go; which one libsandbox uses is not documented);
//   - collating elements and equivalence classes ([[.a.]], [[=a=]]).
func TranslateRegex(pattern string) (string, error) {
	fail := func(reason string) (string, error) {
		return "", &RegexError{Pattern: pattern, Reason: reason}
	}
	var b strings.Builder
	prev := byte(0) // the previous significant character, 0 at the start
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch c {
		case '\\':
			if i+1 >= len(pattern) {
				return fail("trailing backslash")
			}
			n := pattern[i+1]
			if isAlnum(n) {
				return fail(fmt.Sprintf("escape \\%c is not POSIX extended syntax", n))
			}
			b.WriteByte('\\')
			b.WriteByte(n)
			i++
			prev = 'a'
			continue
		case '^':
			if prev != 0 && prev != '(' && prev != '|' {
				return fail("^ in the middle of an expression")
			}
		case '(':
			if i+1 < len(pattern) && pattern[i+1] == '?' {
				return fail("(? groups such as (?i) do not compile in libsandbox")
			}
		case '[':
			end, err := bracket(pattern, i)
			if err != "" {
				return fail(err)
			}
			b.WriteString(pattern[i:end])
			i = end - 1
			prev = 'a'
			continue
		}
		b.WriteByte(c)
		prev = c
	}
	out := b.String()
	if _, err := regexp.Compile(out); err != nil {
		return fail(fmt.Sprintf("does not compile: %v", err))
	}
	return out, nil
}

// bracket returns the end (exclusive) of the bracket expression starting at
// i, or why it cannot be translated.
func bracket(p string, i int) (int, string) {
	j := i + 1
	if j < len(p) && p[j] == '^' {
		j++
	}
	if j < len(p) && p[j] == ']' { // a leading ] is a literal
		j++
	}
	for j < len(p) {
		switch p[j] {
		case '\\':
			return 0, "backslash inside a bracket expression"
		case '[':
			if j+1 < len(p) && (p[j+1] == '.' || p[j+1] == '=') {
				return 0, "collating elements and equivalence classes are not supported"
			}
			if j+1 < len(p) && p[j+1] == ':' {
				k := strings.Index(p[j+2:], ":]")
				if k < 0 {
					return 0, "unterminated character class"
				}
				j += k + 4
				continue
			}
		case ']':
			return j + 1, ""
		}
		j++
	}
	return 0, "unterminated bracket expression"
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

var regexCache sync.Map // key: fold flag + pattern; value: *regexp.Regexp or error

// compileRegex translates and compiles a Seatbelt regex; fold makes it
// case-insensitive (path regexes, see fold.go).
func compileRegex(pattern string, fold bool) (*regexp.Regexp, error) {
	key := "c" + pattern
	if fold {
		key = "f" + pattern
	}
	if v, ok := regexCache.Load(key); ok {
		if err, ok := v.(error); ok {
			return nil, err
		}
		return v.(*regexp.Regexp), nil
	}
	src, err := TranslateRegex(pattern)
	var re *regexp.Regexp
	if err == nil {
		if fold {
			src = "(?i)" + src
		}
		re, err = regexp.Compile(src)
	}
	if err != nil {
		regexCache.Store(key, err)
		return nil, err
	}
	regexCache.Store(key, re)
	return re, nil
}

// matchPathRegex matches a path regex case-insensitively against the path
// as given, decomposed and composed, so either normalisation of the rule or
// the path matches (approximation: see fold.go).
func matchPathRegex(pattern, path string) (bool, error) {
	re, err := compileRegex(pattern, true)
	if err != nil {
		return false, err
	}
	return re.MatchString(path) || re.MatchString(decompose(path)) || re.MatchString(compose(path)), nil
}
