package profile

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/procage-go/procage/profile/sbpl"
)

func mustNew(t testing.TB, opts ...Option) Policy {
	t.Helper()
	p, err := New(BaseV1, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckPath(t *testing.T) {
	tests := []struct {
		path string
		want error
	}{
		{"/", nil},
		{"/usr/lib", nil},
		{"/a b/c\"d", nil},
		{"usr", ErrPathNotAbsolute},
		{"", ErrPathNotAbsolute},
		{"/usr/", ErrPathNotClean},
		{"/usr//lib", ErrPathNotClean},
		{"/usr/./lib", ErrPathNotClean},
		{"/usr/../etc", ErrPathNotClean},
		{"/a\x00b", sbpl.ErrNUL},
		{"/\xff", sbpl.ErrInvalidUTF8},
		{"/" + strings.Repeat("a", MaxPathLen-1), nil},
		{"/" + strings.Repeat("a", MaxPathLen), ErrPathTooLong},
		{strings.Repeat("/a", MaxPathLen), ErrPathTooLong},
	}
	for _, tt := range tests {
		if err := CheckPath(tt.path); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("CheckPath(%q) = %v, want %v", tt.path, err, tt.want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name  string
		base  Base
		opt   Option
		field string
		want  string
	}{
		{"base", 7, nil, "base", "unknown base"},
		{"relative", BaseV1, Read("tmp"), "fs", "not absolute"},
		{"dotdot", BaseV1, ReadWrite("/a/../b"), "fs", "not normalised"},
		{"nul", BaseV1, Exec("/a\x00"), "fs", "NUL"},
		{"access", BaseV1, FS(0, Subpath, "/a"), "fs", "combination"},
		{"target", BaseV1, FS(AccessRead, 9, "/a"), "fs", "target kind"},
		{"ports off", BaseV1, Network(NetworkOff, 80), "network.ports", "loopback and on modes only"},
		{"port range", BaseV1, Network(NetworkLoopback, 70000), "network.ports", "1..65535"},
		{"any port not alone", BaseV1, Network(NetworkLoopback, 80, AnyPort), "network.ports", "AnyPort alone"},
		{"port 0 alone", BaseV1, Network(NetworkLoopback, 0), "network.ports", "use AnyPort for every port"},
		{"port 0 on", BaseV1, Network(NetworkOn, 0), "network.ports", "port 0 is not a port"},
		{"port 0 among others", BaseV1, Network(NetworkLoopback, 80, 0), "network.ports", "port 0 is not a port"},
		{"negative port", BaseV1, Network(NetworkLoopback, 80, -2), "network.ports", "1..65535"},
		{"loopback without ports", BaseV1, Network(NetworkLoopback), "network.ports", "names its ports"},
		{"listen any without on", BaseV1, ListenAnyInterface(), "network.listen_any", "needs network on"},
		{"socket", BaseV1, UnixSocket("x.sock"), "unix_sockets", "not absolute"},
		{"mach", BaseV1, MachLookup("com.apple.*"), "mach_lookup", "wildcards"},
		{"waive", BaseV1, Waive("everything"), "waive", "unknown hard-deny class"},
		{"seatbelt typo", BaseV1, Seatbelt(`(allow file-raed* (subpath "/x"))`), "seatbelt", "unknown operation"},
		{"seatbelt no-sandbox", BaseV1, Seatbelt(`(allow process-exec* (with no-sandbox))`), "seatbelt", "no-sandbox"},
		{"seatbelt syntax", BaseV1, Seatbelt(`(allow file-read*`), "seatbelt", "unclosed"},
		{"seatbelt grant modifier", BaseV1, Seatbelt(`(allow file-read* (subpath "/x") (with grant))`), "seatbelt", "modifier not accepted"},
		{"seatbelt allow default", BaseV1, Seatbelt(`(allow default)`), "seatbelt", "broad allow"},
		{"seatbelt unfiltered mach", BaseV1, Seatbelt(`(allow mach-lookup)`), "seatbelt", "broad allow"},
		{"seatbelt mach wildcard", BaseV1, Seatbelt(`(allow mach*)`), "seatbelt", "broad allow"},
		{"seatbelt mach prefix", BaseV1, Seatbelt(`(allow mach-lookup (global-name-prefix "com.apple."))`), "seatbelt", "broad allow"},
		{"seatbelt mach regex", BaseV1, Seatbelt(`(allow mach-lookup (global-name-regex #"^com\.apple\."))`), "seatbelt", "broad allow"},
		{"seatbelt xpc prefix", BaseV1, Seatbelt(`(allow mach-lookup (global-name "a") (xpc-service-name-prefix ""))`), "seatbelt", "broad allow"},
		{"seatbelt mach require-not", BaseV1, Seatbelt(`(allow mach-lookup (require-not (global-name "a")))`), "seatbelt", "broad allow"},
		{"accept unknown", BaseV1, AcceptBroad("everything"), "accept_broad", "unknown"},
		{"seatbelt empty", BaseV1, Seatbelt(` ; nothing`), "seatbelt", "no rule"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.base, tt.opt)
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("New = %v, want a *profile.Error", err)
			}
			if pe.Field != tt.field || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %q (field %q), want field %q mentioning %q", err, pe.Field, tt.field, tt.want)
			}
		})
	}
	if !errors.Is(func() error { _, err := New(BaseV1, Read("rel")); return err }(), ErrPathNotAbsolute) {
		t.Error("a relative path error does not wrap ErrPathNotAbsolute")
	}
}

func TestPolicyIsAValue(t *testing.T) {
	p, err := New(BaseV1, ReadWrite("/w"), Read("/r"), Read("/w"), Network(NetworkLoopback, 8080, 80, 8080), MachLookup("b"), MachLookup("a"))
	if err != nil {
		t.Fatal(err)
	}
	want := "{base v1; fs: read subpath /r, read+write subpath /w; network loopback [80 8080]; mach a, b}"
	if got := p.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	q, err := p.With(Fork(), Waive(Secrets))
	if err != nil {
		t.Fatal(err)
	}
	if p.Forking() || p.Waived(Secrets) {
		t.Error("With changed the original policy")
	}
	if !q.Forking() || !q.Waived(Secrets) || q.Waived(ProcessAccess) {
		t.Errorf("With did not apply: %v", q)
	}
	rules := p.FSRules()
	rules[0].Path = "/changed"
	if p.FSRules()[0].Path != "/r" {
		t.Error("FSRules returned the policy's own slice")
	}
	if _, err := (Policy{}).With(Fork()); err == nil {
		t.Error("With on a zero Policy succeeded")
	}
	a, _ := New(BaseV1, Read("/a"), Read("/b"))
	b, _ := New(BaseV1, Read("/b"), Read("/a"))
	if !a.Equal(b) {
		t.Error("option order changed the policy")
	}
}

func TestPaths(t *testing.T) {
	p, err := New(BaseV1, Read("/a"), UnixSocket("/s.sock"), Seatbelt(`(deny file-read* (require-any (literal "/z") (subpath "/y")))`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/a", "/s.sock", "/y", "/z"}, p.Paths()); diff != "" {
		t.Errorf("Paths() (-want +got):\n%s", diff)
	}
}

// Broad Seatbelt-layer allows are accepted only when named (issue 12 item
// 5); exact Mach names need no opt-in.
func TestAcceptBroad(t *testing.T) {
	cases := []struct {
		rule string
		kind Broad
	}{
		{`(allow default)`, BroadDefault},
		{`(allow mach-lookup)`, BroadMachLookup},
		{`(allow mach-lookup (global-name-prefix "com.apple."))`, BroadMachLookup},
		{`(allow mach-lookup (global-name-regex #"."))`, BroadMachLookup},
	}
	for _, tc := range cases {
		if _, err := New(BaseV1, Seatbelt(tc.rule), AcceptBroad(tc.kind)); err != nil {
			t.Errorf("%s with AcceptBroad(%s): %v", tc.rule, tc.kind, err)
		}
		other := BroadDefault
		if tc.kind == BroadDefault {
			other = BroadMachLookup
		}
		if _, err := New(BaseV1, Seatbelt(tc.rule), AcceptBroad(other)); !errors.Is(err, ErrBroadAllow) {
			t.Errorf("%s with AcceptBroad(%s) = %v, want ErrBroadAllow", tc.rule, other, err)
		}
	}
	for _, ok := range []string{
		`(allow mach-lookup (global-name "com.apple.system.logger") (local-name "x") (xpc-service-name "y"))`,
		`(deny mach-lookup)`,
		`(deny default)`,
		`(allow file-read* (subpath "/x"))`,
	} {
		if _, err := New(BaseV1, Seatbelt(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	p, err := New(BaseV1, AcceptBroad(BroadMachLookup), Seatbelt(`(allow mach-lookup)`))
	if err != nil {
		t.Fatal(err)
	}
	if got := p.AcceptedBroad(); len(got) != 1 || got[0] != BroadMachLookup {
		t.Errorf("AcceptedBroad() = %v", got)
	}
	q, err := ParseJSON(strings.NewReader(mustJSON(t, p)))
	if err != nil || !q.Equal(p) {
		t.Errorf("JSON round trip: %v, equal %v", err, q.Equal(p))
	}
}

func mustJSON(t *testing.T, p Policy) string {
	t.Helper()
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestControlCharacters (issue 24): a path, Mach name or Seatbelt string
// with a control character is refused when the policy is built, naming
// why: no printed plan could show it as it is.
func TestControlCharacters(t *testing.T) {
	for _, o := range []Option{
		Read("/tmp/x\n(allow default)"), Read("/tmp/x\rA"), UnixSocket("/run/\x1b[2Jx"), Home("/home/\tme"),
		MachLookup("com.x\u0085"), Seatbelt(`(allow file-read* (literal "/a\nb"))`),
	} {
		_, err := New(BaseV1, o)
		if err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("New = %v, want a refusal naming the control character", err)
		}
	}
	if _, err := New(BaseV1, Read("/Users/me/Desktop/Screenshot at 10.00.00\u202fAM.png")); err != nil {
		t.Errorf("a path with U+202F (macOS screenshot names): %v", err)
	}
}
