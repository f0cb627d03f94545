// Package plantext quotes the strings a printed plan carries: the paths,
// names and comments of a Seatbelt profile's comment lines and of the
// Linux plan's lines, and the headers procage prints around them.
//
//	fmt.Printf("path %s: read_file\n", plantext.Word("/tmp/x\n(allow default)"))
//	// path "/tmp/x\n(allow default)": read_file
//
// A string that is plain (printable, no backslash, and not starting with a
// double quote) is written as it is, so ordinary paths read as before.
// Any other string is written as a Go string literal ([strconv.Quote]):
// one line, with every control, escape, format (bidirectional override)
// and non-space separator character and every invalid UTF-8 byte spelled
// as an escape, so no string can end a line, start a forged one or change
// what a terminal shows. [Unquote] gives the string back, so a printed
// plan can be read back exactly.
//
// # Limitations
//
//   - It quotes for one-line text formats only: SBPL string literals are
//     written by profile/sbpl's Quote, in TinyScheme's syntax.
//   - A plain string may still look like other text (a path naming
//     "execute" or "->"); the formats that print words put them where a
//     reader expects them, and [ReadWord] splits them unambiguously.
package plantext

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Word returns s for a place in a line that holds one word: s itself when
// it is plain and has no space, else s quoted. The result never contains
// a space outside a quoted string, so [ReadWord] finds where it ends.
func Word(s string) string { return quote(s, false) }

// Text returns s for free text that ends a line (a comment): s itself
// when it is plain and has no space at either end and does not start
// with ';' (an SBPL layer heading would lose it), else s quoted.
func Text(s string) string { return quote(s, true) }

func quote(s string, spaces bool) string {
	if plain(s, spaces) {
		return s
	}
	return strconv.Quote(s)
}

// plain reports whether s can be written as it is.
func plain(s string, spaces bool) bool {
	if s == "" || s[0] == '"' {
		return false
	}
	if spaces && (s[0] == ' ' || s[0] == ';' || s[len(s)-1] == ' ') {
		return false
	}
	for _, r := range s {
		switch {
		case r == utf8.RuneError, r == '\\', r == ' ' && !spaces:
			return false
		case r < utf8.RuneSelf:
			if r < ' ' || r == 0x7f {
				return false
			}
		case !strconv.IsPrint(r):
			return false
		}
	}
	return true
}

// Unsafe reports whether r must never appear as it is in a printed plan:
// a control character (C0, DEL, C1: line breaks, tab, carriage return,
// the escape that starts a terminal sequence), a line or paragraph
// separator (U+2028, U+2029), or a bidirectional control, which reorders
// the text around it on screen (Trojan Source, CVE-2021-42574). [Word]
// and [Text] quote every such rune, and more; a writer that cannot quote
// (profile/sbpl's string literals) refuses them.
func Unsafe(r rune) bool {
	switch {
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return true
	case r == '\u061c', r == '\u200e', r == '\u200f', '\u202a' <= r && r <= '\u202e', '\u2066' <= r && r <= '\u2069':
		return true
	}
	return false
}

// ErrQuote is returned by [Unquote] and [ReadWord] for a string that
// starts with a double quote but is not a Go string literal.
var ErrQuote = errors.New("plantext: malformed quoted string")

// Unquote returns the string that [Word] or [Text] wrote as s.
func Unquote(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	u, err := strconv.Unquote(s)
	if err != nil {
		return "", ErrQuote
	}
	return u, nil
}

// ReadWord reads a word [Word] wrote at the start of s: up to the next
// space, or the whole quoted string. It returns the word unquoted and the
// rest of s after it.
func ReadWord(s string) (word, rest string, err error) {
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", "", ErrQuote
		}
		u, err := strconv.Unquote(q)
		if err != nil {
			return "", "", ErrQuote
		}
		return u, s[len(q):], nil
	}
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i], s[i:], nil
	}
	return s, "", nil
}
