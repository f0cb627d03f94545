package sim

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// zdecomp.go is generated from the Unicode Character Database: download
// https://www.unicode.org/Public/14.0.0/ucd/UnicodeData.txt into this
// directory first.
//go:generate go run ./internal/gendecomp -ucd UnicodeData.txt -o zdecomp.go

// Path matching is case- and Unicode-normalization-insensitive: the Rust
// procage's spelling matrix (measured on macOS 26.6.2) shows
// "Seatbelt matches every path case- and Unicode-normalization-insensitively,
// on every volume". The simulator compares path keys: the path decomposed
// (NFD, through the Latin-only table in zdecomp.go) and case-folded rune by
// rune (the smallest rune of each unicode.SimpleFold orbit).
//
// Approximation: only precomposed Latin letters (U+00C0..U+024F,
// U+1E00..U+1EFF) are decomposed; Greek, Cyrillic, Hangul and other
// scripts' compositions, compatibility forms and the canonical reordering
// of several combining marks are not. Case folding is simple (one rune to
// one rune): "ß" does not fold to "ss".

// composition is the inverse of decompositions, used to build the
// composed (NFC) spelling a regex is also tried against.
var composition = func() map[string]rune {
	m := make(map[string]rune, len(decompositions))
	for r, d := range decompositions {
		m[d] = r
	}
	return m
}()

// foldRune maps r to a canonical member of its simple case-folding orbit.
func foldRune(r rune) rune {
	min := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < min {
			min = f
		}
	}
	return min
}

// decompose returns s with every precomposed Latin letter decomposed.
func decompose(s string) string {
	if isASCII(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if d, ok := decompositions[r]; ok {
			b.WriteString(d)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// compose returns s with each ASCII letter and the combining marks after it
// composed, longest match first, where the table has a composition.
func compose(s string) string {
	if isASCII(s) {
		return s
	}
	s = decompose(s)
	var b strings.Builder
	for i := 0; i < len(s); {
		// The longest run of a base and combining marks starting at i.
		end := i + 1
		if s[i] < utf8.RuneSelf {
			for end < len(s) {
				r, n := utf8.DecodeRuneInString(s[end:])
				if !isCombining(r) {
					break
				}
				end += n
			}
		} else {
			_, n := utf8.DecodeRuneInString(s[i:])
			end = i + n
		}
		done := false
		for j := end; j > i+1; {
			if r, ok := composition[s[i:j]]; ok {
				b.WriteRune(r)
				i = j
				done = true
				break
			}
			_, n := utf8.DecodeLastRuneInString(s[i:j])
			j -= n
		}
		if !done {
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return b.String()
}

func isCombining(r rune) bool { return r >= 0x300 && r < 0x370 }

// pathKey returns the spelling-insensitive key of a path.
func pathKey(s string) string {
	if isASCII(s) {
		// An ASCII letter's orbit's least member is its upper case (k's
		// holds U+212A, s's U+017F, both above 'Z').
		return strings.ToUpper(s)
	}
	s = decompose(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Path filters, on keys (literal/path exact, subpath the
// path and everything below, prefix a string prefix) [confirmed: Chromium
// design doc, Chromium common.sb].

func matchLiteral(rule, path string) bool { return pathKey(rule) == pathKey(path) }

func matchSubpath(rule, path string) bool {
	r, p := pathKey(rule), pathKey(path)
	if r == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == r || strings.HasPrefix(p, r+"/")
}

func matchPrefix(rule, path string) bool { return strings.HasPrefix(pathKey(path), pathKey(rule)) }

// matchAncestors matches the path named by a path-ancestors filter and each
// of its ancestors up to "/" [inferred from Apple's system.sb, which uses
// (path-ancestors "/System/Volumes/Data/private") to let stat reach a
// firmlinked directory].
func matchAncestors(rule, path string) bool {
	r, p := pathKey(rule), pathKey(path)
	if p == "/" {
		return strings.HasPrefix(r, "/")
	}
	return r == p || strings.HasPrefix(r, p+"/")
}
