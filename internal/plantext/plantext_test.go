package plantext

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func Example() {
	fmt.Printf("path %s: read_file\n", Word("/tmp/x\n(allow default)"))
	fmt.Printf("path %s: read_file\n", Word("/usr/share"))
	// Output:
	// path "/tmp/x\n(allow default)": read_file
	// path /usr/share: read_file
}

func TestWordText(t *testing.T) {
	for _, c := range []struct{ in, word, text string }{
		{"/usr/share", "/usr/share", "/usr/share"},
		{"/a b", `"/a b"`, "/a b"},
		{"", `""`, `""`},
		{`"x"`, `"\"x\""`, `"\"x\""`},
		{`a"b`, `a"b`, `a"b`},
		{`/a\nb`, `"/a\\nb"`, `"/a\\nb"`},
		{"/a\nb", `"/a\nb"`, `"/a\nb"`},
		{"/a\rb", `"/a\rb"`, `"/a\rb"`},
		{"/a\x1b[31mb", `"/a\x1b[31mb"`, `"/a\x1b[31mb"`},
		{"/a\u202eb", `"/a\u202eb"`, `"/a\u202eb"`},
		{"/a\u2028b", `"/a\u2028b"`, `"/a\u2028b"`},
		{"/a\u0085b", `"/a\u0085b"`, `"/a\u0085b"`},
		{"/a\xffb", `"/a\xffb"`, `"/a\xffb"`},
		{"/ünïcödé", "/ünïcödé", "/ünïcödé"},
		{" lead", `" lead"`, `" lead"`},
		{"trail ", `"trail "`, `"trail "`},
		{";layer", ";layer", `";layer"`},
		{"a\u00a0b", `"a\u00a0b"`, `"a\u00a0b"`},
	} {
		if got := Word(c.in); got != c.word {
			t.Errorf("Word(%q) = %s, want %s", c.in, got, c.word)
		}
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %s, want %s", c.in, got, c.text)
		}
	}
}

func TestReadWord(t *testing.T) {
	for _, c := range []struct{ in, word, rest string }{
		{"/a: x", "/a:", " x"},
		{`"/a b": x`, "/a b", ": x"},
		{"/a", "/a", ""},
		{`"a\"b" c`, `a"b`, " c"},
	} {
		w, rest, err := ReadWord(c.in)
		if err != nil || w != c.word || rest != c.rest {
			t.Errorf("ReadWord(%q) = %q, %q, %v; want %q, %q", c.in, w, rest, err, c.word, c.rest)
		}
	}
	for _, bad := range []string{`"unterminated`, `"\q"`} {
		if _, _, err := ReadWord(bad); err != ErrQuote {
			t.Errorf("ReadWord(%q): %v, want ErrQuote", bad, err)
		}
		if _, err := Unquote(bad); err != ErrQuote {
			t.Errorf("Unquote(%q): %v, want ErrQuote", bad, err)
		}
	}
}

// safe reports whether s is one line a terminal shows as it is: valid
// UTF-8 of printable characters (ASCII space included).
func safe(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' })
}

func TestUnsafe(t *testing.T) {
	for _, r := range []rune{'\n', '\r', '\t', 0x1b, 0x7f, 0x85, 0x9b, 0x2028, 0x2029, 0x202e, 0x2067, 0x200f} {
		if !Unsafe(r) {
			t.Errorf("Unsafe(%U) = false", r)
		}
		if w := Word("a" + string(r)); !safe(w) {
			t.Errorf("Word quotes %U as %q", r, w)
		}
	}
	for _, r := range []rune{'a', ' ', '"', '\\', 0xe9, 0x202f, 0x200d, 0x1f600} {
		if Unsafe(r) {
			t.Errorf("Unsafe(%U) = true", r)
		}
	}
}

// FuzzQuote: Word and Text always give one printable line that reads back
// as the input; a word has no space outside its quotes, so ReadWord ends
// it exactly where it ends.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"/tmp/x", "/tmp/x\n(allow default)", "/tmp/x\npath base     /: execute|read_file|read_dir", `"`, `\`, "\x00", "\xff", "\u202e", " a ", ";"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, q := range []func(string) string{Word, Text} {
			out := q(s)
			if !safe(out) {
				t.Fatalf("%q quoted as %q: not one printable line", s, out)
			}
			got, err := Unquote(out)
			if err != nil || got != s {
				t.Fatalf("Unquote(%s) = %q, %v; want %q", out, got, err, s)
			}
		}
		w := Word(s)
		got, rest, err := ReadWord(w + " tail")
		if err != nil || got != s || rest != " tail" {
			t.Fatalf("ReadWord(%s tail) = %q, %q, %v", w, got, rest, err)
		}
		if tx := Text(s); tx == s && (strings.TrimSpace(s) != s || strings.HasPrefix(s, ";")) {
			t.Fatalf("Text(%q) left it bare, but a reader would trim it", s)
		}
	})
}
