package profile

import (
	"errors"
	"strings"
	"testing"

	"github.com/procage-go/procage/internal/egress/hostrule"
)

func TestProxyPolicy(t *testing.T) {
	p, err := New(BaseV1, AllowHosts("GitHub.com", "*.pythonhosted.org", "github.com."), DenyHosts("gist.github.com"), AllowAddresses("::ffff:127.0.0.1", "10.0.0.0/8"))
	if err != nil {
		t.Fatal(err)
	}
	if mode, ports := p.Network(); mode != NetworkProxy || len(ports) != 0 {
		t.Errorf("network %s %v, want proxy", mode, ports)
	}
	if got := strings.Join(p.AllowedHosts(), ","); got != "*.pythonhosted.org,github.com" {
		t.Errorf("allowed %s", got)
	}
	if got := strings.Join(p.AllowedAddresses(), ","); got != "10.0.0.0/8,127.0.0.1" {
		t.Errorf("addresses %s", got)
	}
	if want := "{base v1; fs: none; network proxy hosts *.pythonhosted.org, github.com denying gist.github.com addresses 10.0.0.0/8, 127.0.0.1}"; p.String() != want {
		t.Errorf("String:\n%s\nwant\n%s", p, want)
	}
	same, err := New(BaseV1, Network(NetworkProxy), AllowAddresses("10.0.0.0/8", "127.0.0.1"), DenyHosts("gist.github.com"), AllowHosts("*.pythonhosted.org", "github.com"))
	if err != nil || !same.Equal(p) {
		t.Errorf("the same policy in another order: %v, %v", same, err)
	}
	// JSON: version 3, round trip.
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"version":3,`) || !strings.Contains(string(b), `"network":{"mode":"proxy","allow_hosts":["*.pythonhosted.org","github.com"],"deny_hosts":["gist.github.com"],"allow_addresses":["10.0.0.0/8","127.0.0.1"]}`) {
		t.Errorf("JSON: %s", b)
	}
	back, err := ParseJSON(strings.NewReader(string(b)))
	if err != nil || !back.Equal(p) {
		t.Errorf("round trip: %v, %v", back, err)
	}
}

func TestProxyPolicyErrors(t *testing.T) {
	cases := []struct {
		opts  []Option
		field string
		is    error
		text  string
	}{
		{[]Option{Network(NetworkProxy)}, "network.allow_hosts", ErrNoHosts, "--allow-host"},
		{[]Option{Network(NetworkProxy), DenyHosts("github.com")}, "network.allow_hosts", ErrNoHosts, ""},
		{[]Option{AllowHosts("127.0.0.1")}, "network.allow_hosts", hostrule.ErrIPLiteral, "--allow-address"},
		{[]Option{AllowHosts("[::1]:443")}, "network.allow_hosts", hostrule.ErrIPLiteral, ""},
		{[]Option{AllowHosts("*.com")}, "network.allow_hosts", hostrule.ErrPattern, "two labels"},
		{[]Option{AllowHosts("github.com:0")}, "network.allow_hosts", hostrule.ErrPattern, "1..65535"},
		{[]Option{AllowHosts("a b")}, "network.allow_hosts", hostrule.ErrPattern, "character"},
		{[]Option{DenyHosts("*")}, "network.deny_hosts", hostrule.ErrPattern, ""},
		{[]Option{AllowAddresses("github.com")}, "network.allow_addresses", nil, "not an IP address"},
		{[]Option{Network(NetworkOn), AllowHosts("github.com")}, "network.allow_hosts", nil, "need network mode proxy, not on"},
		{[]Option{Network(NetworkLoopback, 80), AllowHosts("github.com")}, "network.allow_hosts", nil, "not loopback"},
		{[]Option{Network(NetworkProxy, 8080), AllowHosts("github.com")}, "network.ports", nil, "not localhost ports"},
		{[]Option{AllowHosts("github.com"), ListenAnyInterface()}, "network.listen_any", nil, ""},
	}
	for i, c := range cases {
		_, err := New(BaseV1, c.opts...)
		var pe *Error
		if !errors.As(err, &pe) || pe.Field != c.field || (c.is != nil && !errors.Is(err, c.is)) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("case %d: %v; want field %s, %v, %q", i, err, c.field, c.is, c.text)
		}
	}
	// A policy with hosts cannot be turned into another mode.
	p, _ := New(BaseV1, AllowHosts("github.com"))
	if _, err := p.With(Network(NetworkOn)); err == nil {
		t.Error("With(NetworkOn) on a proxy policy: no error")
	}
}

func TestProxyJSONErrors(t *testing.T) {
	for _, c := range []struct{ doc, field, text string }{
		{`{"version":2,"base":"v1","network":{"mode":"proxy","allow_hosts":["github.com"]}}`, "network.mode", `needs "version": 3`},
		{`{"version":2,"base":"v1","network":{"mode":"on","allow_hosts":["github.com"]}}`, "network.allow_hosts", `needs "version": 3`},
		{`{"version":3,"base":"v1","network":{"mode":"proxy"}}`, "network.allow_hosts", "names the hosts"},
		{`{"version":3,"base":"v1","network":{"mode":"proxy","allow_hosts":["github.com","10.0.0.1"]}}`, "network.allow_hosts[1]", "an IP address"},
		{`{"version":3,"base":"v1","network":{"mode":"proxy","allow_hosts":["github.com"],"allow_addresses":["10.0.0.0/33"]}}`, "network.allow_addresses[0]", "address"},
		{`{"version":3,"base":"v1","network":{"mode":"proxy","allow_hosts":"github.com"}}`, "network.allow_hosts", "want an array"},
	} {
		_, err := ParseJSON(strings.NewReader(c.doc))
		var pe *Error
		if !errors.As(err, &pe) || pe.Field != c.field || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v; want field %s with %q", c.doc, err, c.field, c.text)
		}
	}
}
