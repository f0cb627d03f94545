package sbpl

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzPathLiteral: any path either fails to quote or is written inside one
// string that reads back as exactly that path, with no extra rule or form.
func FuzzPathLiteral(f *testing.F) {
	for _, s := range []string{"/tmp/x", `/a"b`, `/a\`, `/a\"))(allow default)(deny x "`, "/a\nb", "/a;b", "/a\x00b", "\xff", `"`, `\\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		prof := &Profile{Version: 1, Rules: []Rule{
			{Effect: Deny, Ops: []string{"default"}},
			{Effect: Allow, Ops: []string{"file-read*"}, Filters: []*Filter{Literal(path)}},
		}}
		text, err := prof.Text()
		if err != nil {
			if CheckString(path) == nil {
				t.Fatalf("Text failed for a quotable path %q: %v", path, err)
			}
			return
		}
		got, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse of written profile failed: %v\n%s", err, text)
		}
		if diff := cmp.Diff(prof, got); diff != "" {
			t.Fatalf("path %q broke out of its string (-want +got):\n%s", path, diff)
		}
	})
}

// FuzzParse: the reader never panics, and when it accepts text, writing
// what it read and reading that again is a fixpoint.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"(version 1)\n(deny default)\n(allow file-read* (subpath \"/usr\"))",
		";; base\n; why\n(allow signal (target self))",
		`(allow network-outbound (remote unix-socket (path-literal "/x")))`,
		`(deny file-write* (regex #"^/a\.b$") (with message "m"))`,
		`(allow file-write-mode (file-mode #o0644))`,
		"(", ")", `"`, "#", "(allow", "(allow x (y (z)))", "((((", "(allow default) ; c\n;; l\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		prof, err := Parse(src)
		if err != nil {
			return
		}
		text, err := prof.Text()
		if err != nil {
			// The reader may accept rules the writer refuses (an empty
			// rule list is fine); never anything it cannot re-read.
			return
		}
		again, err := Parse(text)
		if err != nil {
			t.Fatalf("written text does not parse: %v\n%s", err, text)
		}
		text2, err := again.Text()
		if err != nil {
			t.Fatal(err)
		}
		if text != text2 {
			t.Fatalf("write(read(x)) is not a fixpoint:\n%s\n---\n%s", text, text2)
		}
	})
}

// FuzzComment: any comment and layer name is written on comment lines that
// read back as exactly that comment and layer, with no extra rule or
// form, and every line of the text is a comment, a form or blank.
func FuzzComment(f *testing.F) {
	for _, s := range []string{"why", "a\n(allow default)", "a\r(allow default)", " x ", `"q"`, ";;x", ";x", "a\\b", "\x1b[2J", "\u2028(allow default)", "\xff"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, comment, layer string) {
		prof := &Profile{Version: 1, Rules: []Rule{
			{Effect: Deny, Ops: []string{"default"}, Layer: layer, Comment: comment},
			{Effect: Allow, Ops: []string{"file-read*"}, Filters: []*Filter{Literal("/x")}, Layer: layer},
		}}
		text, err := prof.Text()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(text, "\n") {
			if line != "" && !strings.HasPrefix(line, ";") && !strings.HasPrefix(line, "(") {
				t.Fatalf("comment %q, layer %q: line %q is neither comment nor form:\n%s", comment, layer, line, text)
			}
			if !utf8.ValidString(line) || strings.ContainsFunc(line, func(r rune) bool { return r != ' ' && !unicode.IsPrint(r) }) {
				t.Fatalf("line %q is not printable text", line)
			}
		}
		got, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse: %v\n%s", err, text)
		}
		if diff := cmp.Diff(prof, got); diff != "" {
			t.Fatalf("comment %q, layer %q did not read back (-want +got):\n%s\n%s", comment, layer, diff, text)
		}
	})
}
