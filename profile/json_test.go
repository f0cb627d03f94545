package profile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJSONRoundTrip(t *testing.T) {
	p, err := New(BaseV1,
		Read("/usr/share"), ReadWrite("/private/tmp/work"), FS(AccessRead|AccessExec, Literal, "/opt/bin/tool"),
		Network(NetworkLoopback, 8080), UnixSocket("/private/var/run/x.sock"), MachLookup("com.apple.trustd"),
		Fork(), ExecTargetOnly(), Waive(ProcessAccess), Seatbelt(`(allow sysctl-read (sysctl-name "kern.ostype"))`))
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"version":1,"base":"v1","fs":[{"access":["read","exec"],"literal":"/opt/bin/tool"},{"access":["read","write"],"subpath":"/private/tmp/work"},{"access":["read"],"subpath":"/usr/share"}],"network":{"mode":"loopback","ports":[8080]},"unix_sockets":["/private/var/run/x.sock"],"mach_lookup":["com.apple.trustd"],"fork":true,"exec_target_only":true,"waive":["process-access"],"seatbelt":["(allow sysctl-read (sysctl-name \"kern.ostype\"))"]}`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
	var q Policy
	if err := json.Unmarshal(data, &q); err != nil {
		t.Fatal(err)
	}
	if !p.Equal(q) {
		t.Errorf("round trip changed the policy:\n%v\n%v", p, q)
	}
	again, _ := json.Marshal(q)
	if string(again) != string(data) {
		t.Errorf("second marshal differs:\n%s\n%s", data, again)
	}
}

func TestJSONErrors(t *testing.T) {
	tests := []struct{ in, field, want string }{
		{`{"version":2,"base":"v1"}`, "version", "unsupported policy version"},
		{`{"base":"v1"}`, "version", "unsupported policy version"},
		{`{"version":1}`, "base", "missing"},
		{`{"version":1,"base":"v9"}`, "base", "unknown base"},
		{`{"version":1,"base":"v1","colour":"red"}`, "colour", "unknown field"},
		{`{"version":1,"base":"v1","fs":[{"access":["read"],"subpath":"rel"}]}`, "fs[0].subpath", "not absolute"},
		{`{"version":1,"base":"v1","fs":[{"access":["fly"],"subpath":"/a"}]}`, "fs[0].access", "unknown access"},
		{`{"version":1,"base":"v1","fs":[{"access":["read"]}]}`, "fs[0]", "missing literal or subpath"},
		{`{"version":1,"base":"v1","fs":[{"access":["read"],"literal":"/a","subpath":"/b"}]}`, "fs[0]", "not both"},
		{`{"version":1,"base":"v1","fs":[{"subpath":"/b"}]}`, "fs[0].access", "missing"},
		{`{"version":1,"base":"v1","network":{"mode":"wifi"}}`, "network.mode", "unknown network mode"},
		{`{"version":1,"base":"v1","network":{"mode":"off","ports":[1]}}`, "network.ports", "loopback and on modes only"},
		{`{"version":1,"base":"v1","network":{"mode":"loopback"}}`, "network.ports", "names its ports"},
		{`{"version":1,"base":"v1","network":{"mode":"loopback","ports":[1],"any_port":true}}`, "network.any_port", "exclude"},
		{`{"version":1,"base":"v1","fork":"yes"}`, "fork", "want a JSON bool"},
		{`{"version":1,"base":"v1","exec_target_only":1}`, "exec_target_only", "want a JSON bool"},
		{`{"version":1,"base":"v1","waive":["all"]}`, "waive[0]", "unknown hard-deny class"},
		{`{"version":1,"base":"v1","seatbelt":["(allow nope)"]}`, "seatbelt[0]", "unknown operation"},
		{`{"version":1,"base":"v1","mach_lookup":["a b"]}`, "mach_lookup[0]", "without spaces"},
		{`{"version":1,"base":"v1"} {}`, "json", "trailing data"},
		{`{"version":1,`, "json", "unexpected EOF"},
	}
	for _, tt := range tests {
		_, err := ParseJSON(strings.NewReader(tt.in))
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("ParseJSON(%s) = %v, want a *profile.Error", tt.in, err)
			continue
		}
		if pe.Field != tt.field || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseJSON(%s) = %q (field %q), want field %q mentioning %q", tt.in, err, pe.Field, tt.field, tt.want)
		}
	}
}

// The issue-12 options round-trip: every local port, listening on every
// interface, accepted broad allows.
func TestJSONRoundTripNetworkAndBroad(t *testing.T) {
	for _, opts := range [][]Option{
		{Network(NetworkLoopback, AnyPort)},
		{Network(NetworkOn, AnyPort), ListenAnyInterface()},
		{Network(NetworkOn, 5432), AcceptBroad(BroadDefault, BroadMachLookup), Seatbelt(`(allow mach-lookup)`)},
	} {
		p := mustNew(t, opts...)
		data, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := ParseJSON(strings.NewReader(string(data)))
		if err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		if !p.Equal(q) {
			t.Errorf("round trip changed the policy:\n%v\n%v", p, q)
		}
	}
	p := mustNew(t, Network(NetworkOn, AnyPort), ListenAnyInterface())
	data, _ := json.Marshal(p)
	if want := `"network":{"mode":"on","any_port":true,"listen_any":true}`; !strings.Contains(string(data), want) {
		t.Errorf("Marshal = %s, want it to contain %s", data, want)
	}
}
