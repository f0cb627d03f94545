package sim

import (
	"errors"
	"testing"

	"github.com/procage-go/procage/profile"
)

// TestSpellingMatrix replays the specification's spelling matrix (measured
// on macOS 26.6.2): Seatbelt matches every path case- and
// Unicode-normalization-insensitively, and a rule spelled with the
// resolved (data-volume) path covers the file once resolution rewrote it.
func TestSpellingMatrix(t *testing.T) {
	const (
		composed   = "/Users/me/caf\u00e9"  // é as one code point (NFC)
		decomposed = "/Users/me/cafe\u0301" // e + COMBINING ACUTE ACCENT (NFD)
	)
	tests := []struct {
		name    string
		profile string
		path    string
		allowed bool
	}{
		{"deny in another case covers the file", `(version 1)(allow default)(deny file-read* (subpath "/Users/me/.SSH"))`, "/Users/me/.ssh/id_rsa", false},
		{"deny in lower case covers an upper-case file", `(version 1)(allow default)(deny file-read* (literal "/users/me/secret"))`, "/Users/Me/SECRET", false},
		{"allow in another case covers the file", `(version 1)(deny default)(allow file-read* (subpath "/DATA"))`, "/data/x", true},
		{"composed rule, decomposed name on disk", `(version 1)(allow default)(deny file-read* (literal "` + composed + `"))`, decomposed, false},
		{"decomposed rule, composed name on disk", `(version 1)(allow default)(deny file-read* (literal "` + decomposed + `"))`, composed, false},
		{"composed subpath, decomposed child", `(version 1)(deny default)(allow file-read* (subpath "` + composed + `"))`, decomposed + "/x", true},
		{"case and normalization together", `(version 1)(allow default)(deny file-read* (literal "/Users/me/CAF` + "\u00c9" + `"))`, decomposed, false},
		{"prefix in another case", `(version 1)(allow default)(deny file-read* (prefix "/Users/me/.SS"))`, "/Users/me/.ssh", false},
		{"regex in another case", `(version 1)(allow default)(deny file-read* (regex #"^/Users/me/\.ssh/"))`, "/USERS/ME/.SSH/id", false},
		{"regex composed, decomposed name", `(version 1)(allow default)(deny file-read* (regex #"caf` + "\u00e9" + `$"))`, decomposed, false},
		{"different name stays different", `(version 1)(allow default)(deny file-read* (literal "/Users/me/cafe"))`, composed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := decide(t, tt.profile, Access{Op: "file-read-data", Path: tt.path})
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed != tt.allowed {
				t.Errorf("%q under %s: %v, want allowed=%v", tt.path, tt.profile, d, tt.allowed)
			}
		})
	}
}

// TestSpellingResolved: a policy path the resolver rewrote (a firmlink or
// symbolic link) is lowered in kernel spelling, so the rule covers the file
// as the kernel names it, and not the caller's spelling.
func TestSpellingResolved(t *testing.T) {
	p, err := profile.New(profile.BaseV1, profile.Read("/tmp/work"), profile.Waive(profile.Classes()...))
	if err != nil {
		t.Fatal(err)
	}
	env := profile.Env{Resolved: map[string]string{"/tmp/work": "/System/Volumes/Data/private/tmp/Work"}}
	tests := []struct {
		path    string
		allowed bool
	}{
		{"/System/Volumes/Data/private/tmp/Work/f", true},
		{"/system/volumes/data/private/tmp/work/f", true},
		{"/tmp/work/f", false}, // the kernel never checks the unresolved spelling
	}
	for _, tt := range tests {
		d, err := Explain(p, env, "file-read-data", tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != tt.allowed {
			t.Errorf("%s: %v, want allowed=%v", tt.path, d, tt.allowed)
		}
		ok, why := Reference(p, env, Access{Op: "file-read-data", Path: tt.path})
		if ok != tt.allowed {
			t.Errorf("Reference %s: %v (%s), want %v", tt.path, ok, why, tt.allowed)
		}
	}
}

func TestPathKey(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"/A/B", "/a/b", true},
		{"/\u00c9t\u00e9", "/e\u0301te\u0301", true},
		{"/\u1e9e", "/\u00df", true}, // ẞ and ß fold together (simple folding)
		{"/\u212a", "/k", true},      // KELVIN SIGN folds to k
		{"/\u00df", "/ss", false},    // full folding is not modelled
		{"/e", "/\u00e9", false},
		{"/\u0391", "/\u03b1", true}, // Greek case folds
	}
	for _, tt := range tests {
		if got := pathKey(tt.a) == pathKey(tt.b); got != tt.same {
			t.Errorf("pathKey(%q) == pathKey(%q): %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
	if got, want := compose("/cafe\u0301/A\u030a"), "/caf\u00e9/\u00c5"; got != want {
		t.Errorf("compose = %q, want %q", got, want)
	}
	if got, want := decompose("/caf\u00e9"), "/cafe\u0301"; got != want {
		t.Errorf("decompose = %q, want %q", got, want)
	}
}

func TestTranslateRegex(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`^/dev/ttys[0-9]+$`, `^/dev/ttys[0-9]+$`},
		{`/\.git/hooks/`, `/\.git/hooks/`},
		{`^/a(/b|/c)*$`, `^/a(/b|/c)*$`},
		{`(^/a|^/b)`, `(^/a|^/b)`},
		{`[[:alpha:]]{2,3}`, `[[:alpha:]]{2,3}`},
		{`[]a]`, `[]a]`},
		{`[^/]+\.sock$`, `[^/]+\.sock$`},
	}
	for _, tt := range tests {
		got, err := TranslateRegex(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("TranslateRegex(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	rejects := []string{
		`(?i)^/x`,   // no Perl groups (orbit#495)
		`/x^/y`,     // ^ in the middle
		`\d+`,       // not POSIX ERE
		`(a)\1`,     // back-reference
		`[\.]`,      // backslash in brackets is ambiguous
		`[[.a.]]`,   // collating element
		`[[=a=]]`,   // equivalence class
		`[abc`,      // unterminated
		`/x\`,       // trailing backslash
		`a**`,       // Go refuses the repetition
		`[[:foo:]]`, // unknown class
	}
	for _, in := range rejects {
		got, err := TranslateRegex(in)
		var re *RegexError
		if !errors.Is(err, ErrRegex) || !errors.As(err, &re) || re.Pattern != in {
			t.Errorf("TranslateRegex(%q) = %q, %v; want a *RegexError", in, got, err)
		}
	}
}

// TestPathKeyASCII: pathKey's ASCII fast path gives the key the general
// path (decompose, then fold each rune) gives, byte by byte.
func TestPathKeyASCII(t *testing.T) {
	for c := 0; c < 0x80; c++ {
		s := "/a" + string(rune(c)) + "Z"
		var slow []rune
		for _, r := range decompose(s) {
			slow = append(slow, foldRune(r))
		}
		if got := pathKey(s); got != string(slow) {
			t.Errorf("pathKey(%q) = %q, want %q", s, got, string(slow))
		}
	}
}
