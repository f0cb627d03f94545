package macfs

import "strings"

// A small slice of Unicode canonical decomposition, enough for tests of
// normalization-insensitive lookups without golang.org/x/text: the
// precomposed Latin-1 letters and their base letter plus one combining mark
// (Unicode Character Database, UnicodeData.txt decomposition field).
var marks = []struct {
	mark  rune
	pairs string // composed, base, composed, base, ...
}{
	{0x0300, "ÀAÈEÌIÒOÙUàaèeìiòoùu"},     // grave
	{0x0301, "ÁAÉEÍIÓOÚUÝYáaéeíióoúuýy"}, // acute
	{0x0302, "ÂAÊEÎIÔOÛUâaêeîiôoûu"},     // circumflex
	{0x0303, "ÃAÑNÕOãañnõo"},             // tilde
	{0x0308, "ÄAËEÏIÖOÜUäaëeïiöoüuÿy"},   // diaeresis
	{0x030A, "ÅAåa"},                     // ring above
	{0x0327, "ÇCçc"},                     // cedilla
}

type pair struct{ base, mark rune }

var (
	decompose = map[rune]pair{}
	compose   = map[pair]rune{}
)

func init() {
	for _, m := range marks {
		rs := []rune(m.pairs)
		for i := 0; i+1 < len(rs); i += 2 {
			p := pair{rs[i+1], m.mark}
			decompose[rs[i]] = p
			compose[p] = rs[i]
		}
	}
}

// NFD decomposes the precomposed Latin-1 letters of s (é -> e + U+0301), as
// macOS stores names typed on HFS+ and as many tools write them.
func NFD(s string) string {
	var b strings.Builder
	for _, r := range s {
		if p, ok := decompose[r]; ok {
			b.WriteRune(p.base)
			b.WriteRune(p.mark)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// NFC composes the pairs NFD produces back into single runes.
func NFC(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i := 0; i < len(rs); i++ {
		if i+1 < len(rs) {
			if c, ok := compose[pair{rs[i], rs[i+1]}]; ok {
				b.WriteRune(c)
				i++
				continue
			}
		}
		b.WriteRune(rs[i])
	}
	return b.String()
}

// fold is the comparison key of a name on a volume: APFS compares names
// normalization-insensitively on every volume and, on a case-insensitive
// one, case-insensitively too [reported: Apple "APFS FAQ", native
// normalization-insensitivity since macOS 10.13; case folding here is
// strings.ToLower, close enough for tests].
func fold(name string, caseSensitive bool) string {
	name = NFD(name)
	if !caseSensitive {
		name = strings.ToLower(name)
	}
	return name
}
