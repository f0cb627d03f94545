package seatbelt

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
)

func mustNew(t testing.TB, opts ...profile.Option) profile.Policy {
	t.Helper()
	p, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLower(t testing.TB, p profile.Policy, env profile.Env) *Plan {
	t.Helper()
	plan, err := Lower(p, env)
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// layers returns the distinct layers of a profile in order of appearance.
func layers(prof *sbpl.Profile) []string {
	var out []string
	for _, r := range prof.Rules {
		if len(out) == 0 || out[len(out)-1] != r.Layer {
			out = append(out, r.Layer)
		}
	}
	return out
}

func TestLowerLayerOrder(t *testing.T) {
	p := mustNew(t, profile.Read("/usr/share"), profile.Fork(), profile.Seatbelt(`(allow sysctl-read (sysctl-name "kern.ostype"))`))
	plan := mustLower(t, p, profile.Env{Home: "/Users/me"})
	want := []string{LayerHeader, LayerBase, LayerPolicy, LayerLinks, LayerSeatbelt, LayerHardDeny, LayerMarker}
	if diff := cmp.Diff(want, layers(plan.Profile)); diff != "" {
		t.Errorf("layers (-want +got):\n%s", diff)
	}
	text := plan.Text()
	if !strings.HasPrefix(text, "(version 1)\n\n;; header\n(deny default)\n") {
		t.Errorf("profile does not start with (version 1) and (deny default):\n%s", text)
	}
	if diff := cmp.Diff([]string{ParamRunPrefix, ParamRunMarker}, plan.Params); diff != "" {
		t.Errorf("Params (-want +got):\n%s", diff)
	}
	// The text reads back to the same rules: the plan is what compiles.
	back, err := sbpl.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plan.Profile, back); diff != "" {
		t.Errorf("Parse(Text()) (-want +got):\n%s", diff)
	}
	again := mustLower(t, p, profile.Env{Home: "/Users/me"})
	if again.Text() != text {
		t.Error("lowering is not deterministic")
	}
}

func TestLowerZeroPolicy(t *testing.T) {
	if _, err := Lower(profile.Policy{}, profile.Env{}); err == nil {
		t.Error("Lower on a zero Policy succeeded")
	}
}

func TestLowerNonForkingHasNoMarker(t *testing.T) {
	plan := mustLower(t, mustNew(t), profile.Env{})
	if slices.Contains(layers(plan.Profile), LayerMarker) || len(plan.Params) != 0 {
		t.Errorf("a non-forking policy got a run marker: %v %v", layers(plan.Profile), plan.Params)
	}
	for _, r := range plan.Profile.Rules {
		if slices.Contains(r.Ops, "process-fork") && r.Effect == sbpl.Allow {
			t.Errorf("a non-forking policy allows process-fork: %+v", r)
		}
	}
}

// TestLowerExecTargetOnly: the exec layer comes after every exec allow,
// names the specific exec operations they name, and binds the target per
// spawn.
func TestLowerExecTargetOnly(t *testing.T) {
	p := mustNew(t, profile.ExecTargetOnly(), profile.Exec("/opt/tools"), profile.Seatbelt(`(allow process-exec-interpreter (subpath "/opt/scripts"))`), profile.Fork())
	plan := mustLower(t, p, profile.Env{})
	want := []string{LayerHeader, LayerBase, LayerPolicy, LayerLinks, LayerSeatbelt, LayerExec, LayerHardDeny, LayerMarker}
	if diff := cmp.Diff(want, layers(plan.Profile)); diff != "" {
		t.Errorf("layers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{ParamExecTarget, ParamRunPrefix, ParamRunMarker}, plan.Params); diff != "" {
		t.Errorf("Params (-want +got):\n%s", diff)
	}
	if !strings.Contains(plan.Text(), `(deny process-exec* process-exec-interpreter (require-not (literal (param "PROCAGE_EXEC_TARGET"))))`) {
		t.Errorf("no exec-target-only deny naming the interpreter check:\n%s", plan.Text())
	}
	if mustLower(t, mustNew(t), profile.Env{}).Params != nil {
		t.Error("a policy without ExecTargetOnly binds parameters")
	}
}

func TestLowerUsesKernelSpellings(t *testing.T) {
	p := mustNew(t, profile.ReadWrite("/tmp/work"), profile.UnixSocket("/var/run/x.sock"), profile.Seatbelt(`(deny file-read* (literal "/tmp/work/secret"))`))
	env := profile.Env{
		Resolved: map[string]string{"/tmp/work": "/private/tmp/work", "/var/run/x.sock": "/private/var/run/x.sock", "/tmp/work/secret": "/private/tmp/work/secret"},
		Links:    []string{"/tmp", "/var", "/Users/me/link"},
	}
	text := mustLower(t, p, env).Text()
	for _, want := range []string{
		`(allow file-read* file-write* (subpath "/private/tmp/work"))`,
		`(remote unix-socket (path-literal "/private/var/run/x.sock"))`,
		`file-read-metadata (literal "/private/tmp/work/secret"))`, // a Seatbelt-layer deny, named for each specific op allowed earlier
		`(allow file-read-metadata (literal "/Users/me/link") (literal "/etc") (literal "/tmp") (literal "/var"))`,
		`(literal "/private/tmp")`, // an ancestor of the policy path
	} {
		if !strings.Contains(text, want) {
			t.Errorf("profile lacks %s:\n%s", want, text)
		}
	}
	for _, bad := range []string{`"/tmp/work"`, `"/var/run/x.sock"`} {
		if strings.Contains(text, bad) {
			t.Errorf("profile still names the caller's spelling %s", bad)
		}
	}
}

func TestLowerNetwork(t *testing.T) {
	tests := []struct {
		name     string
		opts     []profile.Option
		want     []string
		wantNone []string
	}{
		{"off", []profile.Option{profile.Network(profile.NetworkOff)}, nil, []string{"network-outbound", "network-bind"}},
		{"loopback", []profile.Option{profile.Network(profile.NetworkLoopback, profile.AnyPort)}, []string{`(allow network-outbound (remote ip "localhost:*"))`, `(allow network-bind network-inbound (local ip "localhost:*"))`}, []string{`"*:*"`}},
		{"ports", []profile.Option{profile.Network(profile.NetworkLoopback, 80, 8080)}, []string{`(allow network-outbound (remote ip "localhost:80") (remote ip "localhost:8080"))`}, []string{`localhost:*`}},
		{"on", []profile.Option{profile.Network(profile.NetworkOn)}, []string{`(allow network-outbound (require-all (remote ip "*:*") (require-not (remote ip "localhost:*"))))`, `(allow network-bind network-inbound (local ip "localhost:*"))`}, []string{`(local ip "*:*")`, `(allow network-outbound (remote ip "localhost`}},
		{"on ports", []profile.Option{profile.Network(profile.NetworkOn, 8080)}, []string{`(allow network-outbound (remote ip "localhost:8080"))`}, []string{`(local ip "*:*")`}},
		{"on listen any", []profile.Option{profile.Network(profile.NetworkOn), profile.ListenAnyInterface()}, []string{`(allow network-bind network-inbound (local ip "*:*"))`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan := mustLower(t, mustNew(t, append(tt.opts, profile.Waive(profile.Classes()...))...), profile.Env{})
			var policy []string
			for _, r := range plan.Profile.Rules {
				if r.Layer == LayerPolicy {
					s, _ := r.Text()
					policy = append(policy, s)
				}
			}
			text := strings.Join(policy, "\n")
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("policy layer lacks %s:\n%s", w, text)
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(text, w) {
					t.Errorf("policy layer has %s:\n%s", w, text)
				}
			}
		})
	}
}

// TestLowerSpecificity: every hard-deny rule names each concrete operation
// an allow names that one of its wildcards covers, since specific beats
// wildcard in Seatbelt whatever the order.
func TestLowerSpecificity(t *testing.T) {
	p := mustNew(t, profile.ReadWrite("/Users/me"), profile.Seatbelt(`(allow file-read-data file-write-data (subpath "/Users/me"))`))
	plan := mustLower(t, p, profile.Env{Home: "/Users/me"})
	var allowed []string
	for _, r := range plan.Profile.Rules {
		if r.Effect == sbpl.Allow {
			for _, op := range r.Ops {
				if !sbpl.IsWildcard(op) {
					allowed = append(allowed, op)
				}
			}
		}
	}
	checked := 0
	for _, r := range plan.Profile.Rules {
		if r.Layer != LayerHardDeny {
			continue
		}
		for _, a := range allowed {
			for _, op := range r.Ops {
				if sbpl.IsWildcard(op) && sbpl.Covers(op, a) {
					checked++
					if !slices.Contains(r.Ops, a) {
						t.Errorf("hard-deny rule %v covers %s by wildcard only", r.Ops, a)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no hard-deny rule covered an allowed concrete operation; the test checked nothing")
	}
	got := withSpecific([]string{"file-read*", "sysctl-read"}, []string{"file-read-data", "file-write-data", "sysctl-read"})
	if diff := cmp.Diff([]string{"file-read*", "sysctl-read", "file-read-data"}, got); diff != "" {
		t.Errorf("withSpecific (-want +got):\n%s", diff)
	}
}

func TestLowerWaiver(t *testing.T) {
	p := mustNew(t)
	full := mustLower(t, p, profile.Env{Home: "/Users/me"})
	for _, c := range profile.Classes() {
		waived := mustLower(t, mustNew(t, profile.Waive(c)), profile.Env{Home: "/Users/me"})
		n := len(hardDenyRules(c, "/Users/me"))
		if n == 0 {
			continue
		}
		if got := full.NumRules() - waived.NumRules(); got != n {
			t.Errorf("waiving %s removed %d rules, want %d", c, got, n)
		}
	}
}

func TestLowerLimit(t *testing.T) {
	var opts []profile.Option
	for i := range 300 {
		opts = append(opts, profile.Read(fmt.Sprintf("/data/d%03d", i)))
	}
	p := mustNew(t, opts...)
	if _, err := LowerLimit(p, profile.Env{}, 100); err != nil {
		var le *LimitError
		if !errors.As(err, &le) || le.Limit != 100 || le.Rules <= 300 {
			t.Fatalf("Lower = %v, want a *LimitError with limit 100 and more than 300 rules", err)
		}
		if want := fmt.Sprintf("seatbelt: the profile has %d rules, more than the compile limit of 100", le.Rules); err.Error() != want {
			t.Errorf("limit error = %q, want %q", err, want)
		}
	} else {
		t.Fatal("Lower over the limit succeeded")
	}
	plan, err := Lower(p, profile.Env{})
	if err != nil {
		t.Fatalf("Lower under the default limit: %v", err)
	}
	if plan.NumRules() > DefaultLimit || plan.NumRules() < 300 {
		t.Errorf("NumRules() = %d", plan.NumRules())
	}
}

// FuzzLowerPath: any path either is refused by the policy or lowers to a
// profile in which it appears as exactly one literal, read back intact,
// and adds exactly one rule.
func FuzzLowerPath(f *testing.F) {
	for _, s := range []string{"/tmp/x", `/a"b`, `/a\b`, `/x"))(allow default)(`, "/a\nb", "/a;b", "/\x00", "rel", "/é"} {
		f.Add(s)
	}
	base := mustLower(f, mustNew(f, profile.Waive(profile.Classes()...)), profile.Env{})
	f.Fuzz(func(t *testing.T, path string) {
		p, err := profile.New(profile.BaseV1, profile.FS(profile.AccessRead, profile.Literal, path), profile.Waive(profile.Classes()...))
		if err != nil {
			return
		}
		plan, err := Lower(p, profile.Env{})
		if err != nil {
			t.Fatalf("Lower(%q): %v", path, err)
		}
		back, err := sbpl.Parse(plan.Text())
		if err != nil {
			t.Fatalf("profile for %q does not parse: %v", path, err)
		}
		found := 0
		for _, r := range back.Rules {
			for _, fl := range r.Filters {
				if fl.Name == "literal" && len(fl.Args) == 1 && fl.Args[0] == sbpl.Str(path) && r.Layer == LayerPolicy && slices.Contains(r.Ops, "file-read*") {
					found++
				}
			}
		}
		if found != 1 {
			t.Fatalf("path %q appears %d times as a policy literal", path, found)
		}
		// One rule for the path, plus at most one ancestor-metadata rule.
		if extra := len(back.Rules) - len(base.Profile.Rules); extra < 1 || extra > 2 {
			t.Fatalf("path %q added %d rules", path, extra)
		}
	})
}

func benchmarkLower(b *testing.B, n int) {
	var opts []profile.Option
	for i := range n {
		opts = append(opts, profile.Read(fmt.Sprintf("/data/d%04d/f", i)))
	}
	p := mustNew(b, opts...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := LowerLimit(p, profile.Env{Home: "/Users/me"}, 100000); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLower200(b *testing.B)  { benchmarkLower(b, 200) }
func BenchmarkLower2000(b *testing.B) { benchmarkLower(b, 2000) }
