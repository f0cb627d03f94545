package sbpl

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQuote(t *testing.T) {
	tests := []struct {
		in, want string
		err      error
	}{
		{in: "/usr/lib", want: `"/usr/lib"`},
		{in: `a"b`, want: `"a\"b"`},
		{in: `a\b`, want: `"a\\b"`},
		{in: `\"`, want: `"\\\""`},
		{in: "new\nline", err: ErrControl},
		{in: "/x\r(allow default)", err: ErrControl},
		{in: "/x\x1b[2J", err: ErrControl},
		{in: "/x\u0085", err: ErrControl},
		{in: "/x\u202fy", want: "\"/x\u202fy\""}, // macOS screenshot names hold U+202F
		{in: "caf\u00e9", want: "\"caf\u00e9\""},
		{in: "a\x00b", err: ErrNUL},
		{in: "\xff", err: ErrInvalidUTF8},
	}
	for _, tt := range tests {
		got, err := Quote(tt.in)
		if !errors.Is(err, tt.err) {
			t.Errorf("Quote(%q) error = %v, want %v", tt.in, err, tt.err)
		}
		if got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestWriteRead(t *testing.T) {
	prof := &Profile{Version: 1, Rules: []Rule{
		{Effect: Deny, Ops: []string{"default"}, Layer: "header"},
		{Effect: Allow, Ops: []string{"file-read*", "file-map-executable"}, Filters: []*Filter{Subpath("/usr/lib"), Literal(`/a "quoted" \ name`)}, Comment: "dyld needs the libraries", Layer: "base"},
		{Effect: Allow, Ops: []string{"network-outbound"}, Filters: []*Filter{F("remote", Sym("ip"), "localhost:8080"), F("remote", Sym("unix-socket"), F("path-literal", "/private/var/run/x.sock"))}, Layer: "policy"},
		{Effect: Allow, Ops: []string{"signal"}, Filters: []*Filter{F("target", Sym("same-sandbox"))}, Layer: "policy"},
		{Effect: Allow, Ops: []string{"system-mac-syscall"}, Filters: []*Filter{F("require-all", F("mac-policy-name", "Sandbox"), F("mac-syscall-number", 2))}, Layer: "policy"},
		{Effect: Deny, Ops: []string{"mach-lookup"}, Filters: []*Filter{F("global-name-prefix", Param("RUN_PREFIX"))}, Modifiers: []Modifier{{Name: "no-report"}}, Layer: "marker"},
		{Effect: Deny, Ops: []string{"file-read*"}, Modifiers: []Modifier{{Name: "message", Args: []Value{Str("tag")}}}, Layer: "marker"},
	}}
	text, err := prof.Text()
	if err != nil {
		t.Fatal(err)
	}
	const want = `(version 1)

;; header
(deny default)

;; base
; dyld needs the libraries
(allow file-read* file-map-executable (subpath "/usr/lib") (literal "/a \"quoted\" \\ name"))

;; policy
(allow network-outbound (remote ip "localhost:8080") (remote unix-socket (path-literal "/private/var/run/x.sock")))
(allow signal (target same-sandbox))
(allow system-mac-syscall (require-all (mac-policy-name "Sandbox") (mac-syscall-number 2)))

;; marker
(deny mach-lookup (global-name-prefix (param "RUN_PREFIX")) (with no-report))
(deny file-read* (with message "tag"))
`
	if diff := cmp.Diff(want, text); diff != "" {
		t.Fatalf("Text() mismatch (-want +got):\n%s", diff)
	}
	got, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(prof, got); diff != "" {
		t.Errorf("Parse(Text()) mismatch (-want +got):\n%s", diff)
	}
	for _, r := range prof.Rules {
		if err := r.Validate(); err != nil {
			t.Errorf("Validate(%v): %v", r.Ops, err)
		}
	}
}

func TestParseAcceptsOtherSpellings(t *testing.T) {
	src := `(version 1) ; trailing
(allow (with report) default)
(deny file-write* (regex #"^/private/tmp/a\.b$"))
(allow file-write-mode (file-mode #o0644))`
	prof, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Effect: Allow, Ops: []string{"default"}, Modifiers: []Modifier{{Name: "report"}}, Comment: "trailing"},
		{Effect: Deny, Ops: []string{"file-write*"}, Filters: []*Filter{F("regex", `^/private/tmp/a\.b$`)}},
		{Effect: Allow, Ops: []string{"file-write-mode"}, Filters: []*Filter{F("file-mode", 0o644)}},
	}
	if diff := cmp.Diff(want, prof.Rules); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
}

// TestParseLines: (debug ...) is dropped, and each rule keeps the line it
// starts on.
func TestParseLines(t *testing.T) {
	src := "(version 1)\n(debug deny)\n; a comment\n(deny default)\n\n(allow file-read*\n  (subpath \"/x\"))\n(allow file-write* (subpath \"/y\"))\n"
	prof, lines, err := ParseLines(src)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{4, 6, 8}, lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if len(prof.Rules) != 3 || prof.Rules[0].Ops[0] != "default" {
		t.Errorf("rules = %v", prof.Rules)
	}
}

// TestReadProfile: the Scheme a hand-written profile uses (Nix's
// sandbox-defaults.sb shape: a define of a parameter, a conditional block)
// is read, rules keep their own lines, and Parse still refuses it.
func TestReadProfile(t *testing.T) {
	src := `(version 1)
(define TMP (param "T"))
(define ROOT "/build")
(deny default)
(allow file* (subpath TMP) (subpath ROOT))
(if (param "NET")
    (begin
      (allow network* (remote ip "localhost:*"))
      (allow network-inbound (local ip "*:*")))
    (deny network*))
(when (not (param "NET")) (allow file-read* (literal "/etc/hosts")))
(if (param "NET") (allow network-bind (local ip "localhost:*")))
(unless (param "NET") (allow file-read* (literal "/etc/resolv.conf")))
`
	tests := []struct {
		name   string
		params map[string]string
		want   string
		lines  []int
	}{
		{"without NET", nil, `(version 1)
(deny default)
(allow file* (subpath (param "T")) (subpath "/build"))
(deny network*)
(allow file-read* (literal "/etc/hosts"))
(allow file-read* (literal "/etc/resolv.conf"))
`, []int{4, 5, 10, 11, 13}},
		{"with NET", map[string]string{"NET": "1"}, `(version 1)
(deny default)
(allow file* (subpath (param "T")) (subpath "/build"))
(allow network* (remote ip "localhost:*"))
(allow network-inbound (local ip "*:*"))
(allow network-bind (local ip "localhost:*"))
`, []int{4, 5, 8, 9, 12}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prof, lines, err := ReadProfile(src, tt.params)
			if err != nil {
				t.Fatal(err)
			}
			got, err := prof.Text()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := Parse(src); err == nil {
		t.Error("Parse accepted define and if")
	}
	for _, bad := range []string{
		`(define (f x) x)`,
		`(define x (string-append "a" "b"))`,
		`(if (string? (param "K")) (allow default))`,
		`(import "system.sb")`,
		`(if (not (param "K")) (version 1))`,
	} {
		if _, _, err := ReadProfile(bad, nil); err == nil {
			t.Errorf("ReadProfile(%s) accepted it", bad)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"unclosed", `(allow file-read*`, "unclosed"},
		{"stray close", `)`, "unexpected )"},
		{"import", `(import "system.sb")`, "unsupported top-level form"},
		{"define", `(define x 1)`, "unsupported top-level form"},
		{"no op", `(allow (literal "/x"))`, "names no operation"},
		{"op after filter", `(allow (literal "/x") file-read*)`, "after a filter"},
		{"bad escape", `(allow file-read* (literal "\q"))`, "unsupported escape"},
		{"unterminated", `(allow file-read* (literal "/x))`, "unterminated"},
		{"version late", `(allow default) (version 1)`, "must come first"},
		{"quote", `'(allow default)`, "quote"},
		{"deep", strings.Repeat("(", 100), "nested deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.src)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %v, want a *ParseError", tt.src, err)
			}
			if !strings.Contains(pe.Msg, tt.want) {
				t.Errorf("Parse(%q) = %q, want it to mention %q", tt.src, pe.Msg, tt.want)
			}
		})
	}
	if _, err := ParseRules(`(version 1)`); err == nil {
		t.Error("ParseRules accepted a (version) form")
	}
	if _, err := ParseRules(`(debug deny)`); err == nil {
		t.Error("ParseRules accepted a (debug) form")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		src  string
		want string // "" = valid
	}{
		{`(allow file-read* (subpath "/usr"))`, ""},
		{`(allow file-read-data (require-all (subpath "/a") (require-not (literal "/a/b"))))`, ""},
		{`(allow mach-lookup (global-name "com.apple.system.logger"))`, ""},
		{`(allow mach-lookup (global-name-prefix "com.apple."))`, ""},
		{`(allow sysctl-read (sysctl-name-prefix "kern.proc"))`, ""},
		{`(allow sysctl-read (sysctl-name-regex #"^hw\."))`, ""},
		{`(allow file-read* (vnode-type REGULAR-FILE))`, ""},
		{`(allow system-socket (socket-domain AF_UNIX))`, ""},
		{`(allow network-outbound (remote tcp "*:443"))`, ""},
		{`(allow file-read* (extension "com.apple.app-sandbox.read"))`, ""},
		{`(allow file-raed* (subpath "/usr"))`, `unknown operation "file-raed*"`},
		{`(allow file-read* (subpth "/usr"))`, `unknown filter "subpth"`},
		{`(allow process-exec* (literal "/bin/ps") (with no-sandbox))`, "no-sandbox"},
		{`(allow file-read* (with frobnicate))`, "unknown modifier"},
		{`(deny file-read* (with report))`, ""},
		{`(deny file-read* (with no-report))`, ""},
		{`(deny file-read* (with no-log))`, ""},
		{`(deny file-read* (with message "tag"))`, ""},
		{`(deny file-read* (with errno ENOENT))`, ""},
		{`(deny syscall-unix (with send-signal SIGSYS))`, ""},
		{`(allow file-read* (with default-sandbox))`, "not accepted"},
		{`(allow process-exec* (with sip-override))`, "not accepted"},
		{`(allow file-read* (with grant))`, "not accepted"},
		{`(allow mach-lookup (with authority))`, "not accepted"},
		{`(allow file-read* (with user-approval))`, "not accepted"},
		{`(allow file-read* (with no-times))`, "not accepted"},
		{`(allow file-read* (with assign-storage-class))`, "not accepted"},
		{`(allow file-read* (with telemetry))`, "not accepted"},
		{`(allow file-read* (with enable-state-flag))`, "not accepted"},
		{`(allow file-read* (with message-filter))`, "not accepted"},
		{`(allow file-read* (subpath "usr"))`, "must be absolute"},
		{`(allow file-read* (subpath "/a" "/b"))`, "takes one string"},
		{`(allow file-read* (vnode-type PLAIN))`, "must be one of"},
		{`(allow signal (target everyone))`, "must be one of"},
		{`(allow network-outbound (remote ip "127.0.0.1:*"))`, "only localhost or *"},
		{`(allow network-outbound (remote ip "localhost:99999"))`, "port must be"},
		{`(allow network-outbound (remote quic "localhost:1"))`, "unknown protocol"},
		{`(allow network-outbound (remote unix-socket "/x"))`, "path filter"},
		{`(allow file-read* (require-not (literal "/a") (literal "/b")))`, "one filter"},
		{`(allow global-name-regex (global-name-regex "x"))`, "unknown operation"},
		{`(allow mach-lookup (sysctl-name-prefix-regex "x"))`, "unknown filter"},
	}
	for _, tt := range tests {
		rules, err := ParseRules(tt.src)
		if err != nil {
			t.Fatalf("ParseRules(%s): %v", tt.src, err)
		}
		err = rules[0].Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Validate(%s) = %v, want nil", tt.src, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Validate(%s) = %v, want an error mentioning %q", tt.src, err, tt.want)
		}
	}
	r := Rule{Effect: Allow, Ops: []string{"process-exec*"}, Modifiers: []Modifier{{Name: "no-sandbox"}}}
	if err := r.Validate(); !errors.Is(err, ErrNoSandbox) {
		t.Errorf("Validate(no-sandbox) = %v, want ErrNoSandbox", err)
	}
	r = Rule{Effect: Allow, Ops: []string{"file-read*"}, Modifiers: []Modifier{{Name: "grant"}}}
	if err := r.Validate(); !errors.Is(err, ErrModifier) {
		t.Errorf("Validate(grant) = %v, want ErrModifier", err)
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		op, concrete string
		want         bool
	}{
		{"default", "file-read-data", true},
		{"file-read*", "file-read-data", true},
		{"file-read*", "file-write-data", false},
		{"file*", "file-write-unlink", true},
		{"process-exec*", "process-exec-interpreter", true},
		{"file-read-data", "file-read-data", true},
		{"file-read-data", "file-read-metadata", false},
	}
	for _, tt := range tests {
		if got := Covers(tt.op, tt.concrete); got != tt.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tt.op, tt.concrete, got, tt.want)
		}
	}
	got := ConcreteOperations("file-read*")
	want := []string{"file-read-data", "file-read-metadata", "file-read-xattr"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ConcreteOperations(file-read*) (-want +got):\n%s", diff)
	}
}

// TestGeneratedNames checks that znames.go matches the name lists it is
// generated from, kept in the repository beside the generator.
func TestGeneratedNames(t *testing.T) {
	data := filepath.Join("internal", "gennames", "data")
	out := filepath.Join(t.TempDir(), "znames.go")
	cmd := exec.Command("go", "run", "./internal/gennames", "-data", data, "-o", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gennames: %v\n%s", err, b)
	}
	want, _ := os.ReadFile(out)
	got, err := os.ReadFile("znames.go")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("znames.go is stale; run go generate ./profile/sbpl (-want +got):\n%s", diff)
	}
	if !IsOperation("file-read-data") || IsOperation("file-raed") || len(operationNames) != 196 {
		t.Errorf("operation table wrong: %d names", len(operationNames))
	}
}

func TestRulePaths(t *testing.T) {
	rules, err := ParseRules(`(allow file-read* (require-any (literal "/a") (subpath "/b") (regex "^/c")) (remote unix-socket (path-literal "/d")) (extension "/e"))`)
	if err != nil {
		t.Fatal(err)
	}
	r := rules[0]
	if diff := cmp.Diff([]string{"/a", "/b", "/d"}, r.Paths()); diff != "" {
		t.Errorf("Paths (-want +got):\n%s", diff)
	}
	mapped := r.MapPaths(func(p string) string { return "/private" + p })
	if diff := cmp.Diff([]string{"/private/a", "/private/b", "/private/d"}, mapped.Paths()); diff != "" {
		t.Errorf("MapPaths (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"/a", "/b", "/d"}, r.Paths()); diff != "" {
		t.Errorf("MapPaths changed the original (-want +got):\n%s", diff)
	}
	text, _ := mapped.Text()
	if !strings.Contains(text, `(regex "^/c")`) || !strings.Contains(text, `(extension "/e")`) {
		t.Errorf("MapPaths touched a non-path argument: %s", text)
	}
}
