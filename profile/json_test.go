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
	tests := []struct {
		in, field, want string
		line, col       int
	}{
		{`{"version":4,"base":"v1"}`, "version", "unsupported policy version (want 1 to 3)", 1, 12},
		{`{"version":0,"base":"v1"}`, "version", "unsupported policy version", 1, 12},
		{`{"version":1,"base":"v1","accept_gaps":["network-loopback"]}`, "accept_gaps", `needs "version": 2`, 1, 40},
		{`{"version":1,"base":"v1","home":"/home/me"}`, "home", `needs "version": 2`, 1, 33},
		{`{"version":2,"base":"v1","accept_gaps":["network-loopback","loopback"]}`, "accept_gaps[1]", `"loopback": unknown gap (known: secrets-inside-allowed-tree, `, 1, 60},
		{"{\n  \"version\": 2,\n  \"base\": \"v1\",\n  \"accept_gaps\": [\"all\"]\n}", "accept_gaps[0]", "unknown gap", 4, 19},
		{`{"version":2,"base":"v1","accept_gaps":"network-loopback"}`, "accept_gaps", "want an array, not string", 1, 40},
		{`{"version":2,"base":"v1","home":"home/me"}`, "home", "not absolute", 1, 33},
		{`{"version":2,"base":"v1","home":"/home/me/"}`, "home", "not normalised", 1, 33},
		{`{"base":"v1"}`, "version", "unsupported policy version", 1, 1},
		{`{"version":1}`, "base", "missing", 1, 1},
		{`{"version":1,"base":"v9"}`, "base", "unknown base", 1, 21},
		{`{"version":1,"base":"v1","colour":"red"}`, "colour", "unknown field", 1, 26},
		{`{"version":1,"base":"v1","network":{"mode":"on","Ports":[1]}}`, "network.Ports", "unknown field", 1, 49},
		{`{"version":1,"base":"v1","fs":[{"access":["read"],"subpath":"rel"}]}`, "fs[0].subpath", "not absolute", 1, 61},
		{"{\n  \"version\": 1,\n  \"base\": \"v1\",\n  \"fs\": [\n    {\"access\": [\"read\"], \"subpath\": \"/a\"},\n    {\"access\": [\"read\"], \"subpath\": \"b\"}\n  ]\n}",
			"fs[1].subpath", "not absolute", 6, 37},
		{`{"version":1,"base":"v1","fs":[{"access":["fly"],"subpath":"/a"}]}`, "fs[0].access", "unknown access", 1, 42},
		{`{"version":1,"base":"v1","fs":[{"access":["read"]}]}`, "fs[0]", "missing literal or subpath", 1, 32},
		{`{"version":1,"base":"v1","fs":[{"access":["read"],"literal":"/a","subpath":"/b"}]}`, "fs[0]", "not both", 1, 32},
		{`{"version":1,"base":"v1","fs":[{"subpath":"/b"}]}`, "fs[0].access", "missing", 1, 32},
		{`{"version":1,"base":"v1","fs":[{"access":"read","subpath":"/b"}]}`, "fs[0].access", "want an array, not string", 1, 42},
		{`{"version":1,"base":"v1","fs":[{"access":["read",7],"subpath":"/b"}]}`, "fs[0].access[1]", "want a string, not number", 1, 50},
		{`{"version":1,"base":"v1","network":{"mode":"wifi"}}`, "network.mode", "unknown network mode", 1, 44},
		{`{"version":1,"base":"v1","network":{"mode":"off","ports":[1]}}`, "network.ports", "loopback and on modes only", 1, 58},
		{`{"version":1,"base":"v1","network":{"mode":"loopback"}}`, "network.ports", "names its ports", 1, 36},
		{`{"version":1,"base":"v1","network":{"mode":"loopback","ports":[1],"any_port":true}}`, "network.any_port", "exclude", 1, 78},
		{`{"version":1,"base":"v1","network":{"mode":"loopback","ports":[0]}}`, "network.ports[0]", `use AnyPort for every port (procage: --port any; JSON: "any_port": true)`, 1, 64},
		{`{"version":1,"base":"v1","network":{"mode":"on","ports":[8080,-1]}}`, "network.ports[1]", `port must be 1..65535 (every port: "any_port": true)`, 1, 63},
		{`{"version":1,"base":"v1","fork":"yes"}`, "fork", "want true or false, not string", 1, 33},
		{`{"version":1,"base":"v1","exec_target_only":1}`, "exec_target_only", "want true or false, not number", 1, 45},
		{`{"version":1,"base":"v1","waive":["all"]}`, "waive[0]", "unknown hard-deny class", 1, 35},
		{`{"version":1,"base":"v1","seatbelt":["(allow nope)"]}`, "seatbelt[0]", "unknown operation", 1, 38},
		{`{"version":1,"base":"v1","mach_lookup":["a b"]}`, "mach_lookup[0]", "without spaces", 1, 41},
		{`{"version":1,"base":"v1","fork":true,"fork":false}`, "fork", "repeated key", 1, 38},
		{`{"version":1,"base":"v1","network":{"mode":"on","mode":"off"}}`, "network.mode", "repeated key", 1, 49},
		{`{"version":1,"base":"v1"} {}`, "", "trailing data", 1, 27},
		{`{"version":1,`, "", "unexpected end of the policy", 1, 14},
		{"{\"version\":1,\n\"base\" \"v1\"}", "", "invalid character", 2, 8},
		{`[]`, "", "want an object, not array", 1, 1},
		{``, "", "unexpected end of the policy", 1, 1},
		{`{"version":1,"base":"v1","fs":[{"access":["read"],"subpath":"/é/x/../y"}]}`, "fs[0].subpath", "not normalised", 1, 61},
	}
	for _, tt := range tests {
		_, err := ParseJSON(strings.NewReader(tt.in))
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("ParseJSON(%s) = %v, want a *profile.Error", tt.in, err)
			continue
		}
		if pe.Field != tt.field || !strings.Contains(err.Error(), tt.want) || pe.Line != tt.line || pe.Column != tt.col {
			t.Errorf("ParseJSON(%s) = %q (field %q at %d:%d), want field %q at %d:%d mentioning %q",
				tt.in, err, pe.Field, pe.Line, pe.Column, tt.field, tt.line, tt.col, tt.want)
		}
		if strings.Contains(err.Error(), ": :") || strings.Contains(err.Error(), "json: ") {
			t.Errorf("ParseJSON(%s) = %q: empty field or a nested prefix", tt.in, err)
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

// TestJSONVersion2: accepted gaps and the home directory round-trip in a
// version 2 document; a policy without them is still written as version
// 1, which older readers take, and version 1 documents still parse.
func TestJSONVersion2(t *testing.T) {
	p := mustNew(t, ReadWrite("/home/me/project"), AcceptGaps(GapTrustHandoff, GapLoopback, GapTrustHandoff), Home("/home/me"), Network(NetworkLoopback, 8080))
	if got, want := p.AcceptedGaps(), []Gap{GapTrustHandoff, GapLoopback}; !cmp.Equal(got, want) {
		t.Errorf("AcceptedGaps = %v, want %v (report order, once each)", got, want)
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"version":2,"base":"v1","fs":[{"access":["read","write"],"subpath":"/home/me/project"}],"network":{"mode":"loopback","ports":[8080]},"accept_gaps":["trust-handoff-inside-writable-tree","network-loopback"],"home":"/home/me"}`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("Marshal (-want +got):\n%s", diff)
	}
	q, err := ParseJSON(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Equal(q) || q.Home() != "/home/me" {
		t.Errorf("round trip changed the policy:\n%v\n%v", p, q)
	}
	if p.Equal(mustNew(t, ReadWrite("/home/me/project"), AcceptGaps(GapTrustHandoff, GapLoopback), Network(NetworkLoopback, 8080))) {
		t.Error("policies that differ in their home are Equal")
	}

	old := mustNew(t, Read("/usr/share"))
	data, _ = json.Marshal(old)
	if !strings.HasPrefix(string(data), `{"version":1,`) {
		t.Errorf("a policy without gaps or home is written as %s, want version 1", data)
	}
	v1, err := ParseJSON(strings.NewReader(`{"version":1,"base":"v1","fs":[{"access":["read"],"subpath":"/usr/share"}]}`))
	if err != nil || !v1.Equal(old) {
		t.Errorf("version 1 document: %v, %v", v1, err)
	}
	v2, err := ParseJSON(strings.NewReader(`{"version":2,"base":"v1","fs":[{"access":["read"],"subpath":"/usr/share"}]}`))
	if err != nil || !v2.Equal(old) {
		t.Errorf("version 2 document without the new fields: %v, %v", v2, err)
	}
	if _, err := New(BaseV1, AcceptGaps("everything")); err == nil {
		t.Error("AcceptGaps took an unknown gap")
	}
}
