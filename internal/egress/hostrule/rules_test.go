package hostrule

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestParsePattern(t *testing.T) {
	ok := map[string]Pattern{
		"github.com":             {Host: "github.com"},
		"GitHub.COM.":            {Host: "github.com"},
		"*.pythonhosted.org":     {Host: "*.pythonhosted.org"},
		"github.com:443":         {Host: "github.com", Port: 443},
		"*.example.co.uk:8080":   {Host: "*.example.co.uk", Port: 8080},
		"localhost":              {Host: "localhost"},
		"xn--bcher-kva.example":  {Host: "xn--bcher-kva.example"},
		"a-b.c1":                 {Host: "a-b.c1"},
		"registry.npmjs.org:1":   {Host: "registry.npmjs.org", Port: 1},
		"proxy.golang.org:65535": {Host: "proxy.golang.org", Port: 65535},
	}
	for in, want := range ok {
		got, err := ParsePattern(in)
		if err != nil || got != want {
			t.Errorf("ParsePattern(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if again, err := ParsePattern(got.String()); err != nil || again != got {
			t.Errorf("ParsePattern(%q.String()) = %+v, %v", in, again, err)
		}
	}
	bad := map[string]error{
		"":                    ErrPattern,
		"127.0.0.1":           ErrIPLiteral,
		"127.0.0.1:80":        ErrIPLiteral,
		"::1":                 ErrIPLiteral,
		"[::1]:443":           ErrIPLiteral,
		"fd00::/8":            ErrIPLiteral,
		"10.0.0.0/8":          ErrIPLiteral,
		"127.1":               ErrIPLiteral,
		"0x7f.1":              ErrIPLiteral,
		"example.123":         ErrIPLiteral,
		"*":                   ErrPattern,
		"*.com":               ErrPattern,
		"a.*.com":             ErrPattern,
		"*example.com":        ErrPattern,
		"**.example.com":      ErrPattern,
		"github.com:0":        ErrPattern,
		"github.com:65536":    ErrPattern,
		"github.com:":         ErrPattern,
		"github.com:http":     ErrPattern,
		"github.com:+443":     ErrPattern,
		"git hub.com":         ErrPattern,
		"-github.com":         ErrPattern,
		"github..com":         ErrPattern,
		"bücher.example":      ErrPattern,
		"http://github.com":   ErrPattern,
		"github.com/path":     ErrPattern,
		"a:b:c":               ErrPattern,
		"under_score.example": ErrPattern,
	}
	for in, want := range bad {
		if p, err := ParsePattern(in); !errors.Is(err, want) {
			t.Errorf("ParsePattern(%q) = %+v, %v; want %v", in, p, err, want)
		}
	}
}

func TestPatternMatch(t *testing.T) {
	cases := []struct {
		pattern, host string
		port          int
		want          bool
	}{
		{"github.com", "github.com", 443, true},
		{"github.com", "api.github.com", 443, false},
		{"github.com", "evilgithub.com", 443, false},
		{"*.pythonhosted.org", "files.pythonhosted.org", 443, true},
		{"*.pythonhosted.org", "a.b.pythonhosted.org", 80, true},
		{"*.pythonhosted.org", "pythonhosted.org", 443, false},
		{"*.pythonhosted.org", "evilpythonhosted.org", 443, false},
		{"github.com:443", "github.com", 443, true},
		{"github.com:443", "github.com", 22, false},
	}
	for _, c := range cases {
		p, err := ParsePattern(c.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Match(c.host, c.port); got != c.want {
			t.Errorf("%s matches %s:%d = %v, want %v", c.pattern, c.host, c.port, got, c.want)
		}
	}
}

func TestNewRules(t *testing.T) {
	if _, err := NewRules(nil, []string{"github.com"}, nil); !errors.Is(err, ErrNoAllow) {
		t.Errorf("deny only: %v, want ErrNoAllow", err)
	}
	if _, err := NewRules([]string{"github.com", "127.0.0.1"}, nil, nil); !errors.Is(err, ErrIPLiteral) {
		t.Errorf("address as a host: %v, want ErrIPLiteral", err)
	}
	if _, err := NewRules(nil, nil, []string{"github.com"}); err == nil {
		t.Error("a name as an address: no error")
	}
	r, err := NewRules([]string{"*.example.com", "api.other.com:443"}, []string{"bad.example.com"}, []string{"10.1.0.0/16", "[::1]:8080"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		want Verdict
		rule string
	}{
		{"a.example.com", 80, Allowed, "*.example.com"},
		{"bad.example.com", 80, DeniedByRule, "bad.example.com"},
		{"x.bad.example.com", 80, Allowed, "*.example.com"},
		{"api.other.com", 443, Allowed, "api.other.com:443"},
		{"api.other.com", 80, DeniedNoRule, ""},
		{"example.com", 443, DeniedNoRule, ""},
	} {
		d := r.DecideName(c.host, c.port)
		if d.Verdict != c.want || d.Rule != c.rule {
			t.Errorf("%s:%d: %s by %q, want %s by %q", c.host, c.port, d.Verdict, d.Rule, c.want, c.rule)
		}
	}
	for _, c := range []struct {
		addr string
		port int
		want Verdict
	}{
		{"10.1.2.3", 80, Allowed},
		{"::ffff:10.1.2.3", 80, Allowed},
		{"10.2.0.1", 80, DeniedNoRule},
		{"::1", 8080, Allowed},
		{"::1", 8081, DeniedNoRule},
		{"93.184.215.14", 443, DeniedNoRule}, // public, but named by no rule
	} {
		if d := r.DecideAddr(netip.MustParseAddr(c.addr), c.port, Host{}); d.Verdict != c.want {
			t.Errorf("%s:%d: %s, want %s", c.addr, c.port, d.Verdict, c.want)
		}
	}
}

func TestParseAddress(t *testing.T) {
	ok := map[string]string{
		"127.0.0.1":           "127.0.0.1",
		"127.0.0.1:8080":      "127.0.0.1:8080",
		"10.0.0.0/8":          "10.0.0.0/8",
		"10.1.2.3/8":          "10.0.0.0/8",
		"::1":                 "::1",
		"[::1]:8080":          "[::1]:8080",
		"fd00::/8":            "fd00::/8",
		"::ffff:127.0.0.1":    "127.0.0.1",
		"::ffff:10.0.0.0/104": "10.0.0.0/8",
	}
	for in, want := range ok {
		a, err := ParseAddress(in)
		if err != nil || a.String() != want {
			t.Errorf("ParseAddress(%q) = %v, %v; want %s", in, a, err, want)
		}
	}
	for _, in := range []string{"", "github.com", "10.0.0.0/33", "fe80::1%eth0", "[::1", "[::1]x", "127.0.0.1:0", "1.2.3.4:99999"} {
		if a, err := ParseAddress(in); err == nil {
			t.Errorf("ParseAddress(%q) = %v, want an error", in, a)
		}
	}
}

func TestClassify(t *testing.T) {
	cases := map[string]AddrClass{
		"93.184.215.14":          Public,
		"2606:4700::6810":        Public,
		"0.0.0.0":                Unspecified,
		"0.1.2.3":                Unspecified,
		"::":                     Unspecified,
		"127.0.0.1":              Loopback,
		"127.255.0.1":            Loopback,
		"::1":                    Loopback,
		"::ffff:127.0.0.1":       Loopback,
		"10.0.0.1":               Private,
		"172.16.0.1":             Private,
		"172.31.255.255":         Private,
		"172.32.0.1":             Public,
		"192.168.1.1":            Private,
		"fd00::1":                Private,
		"fc00::1":                Private,
		"169.254.169.254":        Metadata,
		"::ffff:169.254.169.254": Metadata,
		"fd00:ec2::254":          Metadata,
		"100.100.100.200":        Metadata,
		"169.254.1.1":            LinkLocal,
		"fe80::1":                LinkLocal,
		"100.64.0.1":             CGNAT,
		"100.127.255.255":        CGNAT,
		"100.128.0.1":            Public,
		"224.0.0.1":              Multicast,
		"ff02::1":                Multicast,
		"255.255.255.255":        Reserved,
		"240.0.0.1":              Reserved,
		"64:ff9b::7f00:1":        Embedded, // NAT64 of 127.0.0.1
		"64:ff9b::a9fe:a9fe":     Embedded, // NAT64 of 169.254.169.254
		"64:ff9b::5db8:d70e":     Public,   // NAT64 of a public address
		"2002:7f00:1::1":         Embedded, // 6to4 of 127.0.0.1
		"::7f00:1":               Embedded, // IPv4-compatible 127.0.0.1
	}
	for in, want := range cases {
		if got := Classify(netip.MustParseAddr(in)); got != want {
			t.Errorf("Classify(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestHostLocal: a destination on this host other than loopback (an
// unspecified address, one of the host's own, in any of its forms) is
// refused unless an address rule names that address; a rule for a
// network containing it, or for every address, does not.
func TestHostLocal(t *testing.T) {
	h := NewHost([]netip.Addr{
		netip.MustParseAddr("93.184.215.14"), // public
		netip.MustParseAddr("2606:4700::6810"),
		netip.MustParseAddr("10.1.2.3"),
		netip.MustParseAddr("fe80::1%eth0"),
		netip.MustParseAddr("127.0.0.1"), // loopback keeps its class
	})
	local := map[string]AddrClass{
		"93.184.215.14":        Own,
		"::ffff:93.184.215.14": Own,
		"64:ff9b::5db8:d70e":   Own, // NAT64
		"2002:5db8:d70e::1":    Own, // 6to4
		"::5db8:d70e":          Own, // IPv4-compatible
		"2606:4700::6810":      Own,
		"10.1.2.3":             Own,
		"fe80::1%eth1":         Own,
		"0.0.0.0":              Unspecified,
		"::":                   Unspecified,
		"::ffff:0.0.0.0":       Unspecified,
		"127.0.0.1":            "",
		"93.184.215.15":        "",
		"64:ff9b::5db8:d70f":   "",
		"::ffff:10.1.2.4":      "",
	}
	broad, err := NewRules([]string{"own.test"}, nil, []string{"0.0.0.0/0", "::/0"})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range local {
		a := netip.MustParseAddr(s)
		c, ok := h.Local(a)
		if ok != (want != "") || ok && c != want {
			t.Errorf("Local(%s) = %s, %v; want %q", s, c, ok, want)
		}
		d := broad.Filter(Decision{Verdict: Allowed}, "own.test", 80, []netip.Addr{a}, h)
		lit := broad.DecideAddr(a, 80, h)
		if ok && (d.Verdict != DeniedAddress || lit.Verdict != DeniedAddress || len(lit.Refused) != 1 || !strings.Contains(d.Reason, "this host") || !strings.Contains(lit.Reason, "this host")) {
			t.Errorf("%s under rules for every address: name %v, literal %v; want both %s naming this host", s, d, lit, DeniedAddress)
		}
		if !ok && (d.Verdict != Allowed || lit.Verdict != Allowed) {
			t.Errorf("%s (not this host's) under rules for every address: name %s, literal %s", s, d.Verdict, lit.Verdict)
		}
	}
	// A rule naming the address (and its port) allows it.
	named, err := NewRules([]string{"own.test"}, nil, []string{"93.184.0.0/16", "93.184.215.14:8080", "0.0.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	own := netip.MustParseAddr("93.184.215.14")
	for _, c := range []struct {
		addr string
		port int
		want Verdict
	}{
		{"93.184.215.14", 8080, Allowed},
		{"::ffff:93.184.215.14", 8080, Allowed},
		{"93.184.215.14", 80, DeniedAddress}, // the /16 contains it, names it not
		{"93.184.215.15", 80, Allowed},
		{"0.0.0.0", 80, Allowed},
		{"::", 80, DeniedNoRule},
	} {
		if d := named.DecideAddr(netip.MustParseAddr(c.addr), c.port, h); d.Verdict != c.want {
			t.Errorf("literal %s:%d: %v, want %s", c.addr, c.port, d, c.want)
		}
	}
	if d := named.Filter(Decision{Verdict: Allowed}, "own.test", 80, []netip.Addr{own, netip.MustParseAddr("151.101.0.223")}, h); d.Verdict != Allowed || len(d.Addrs) != 1 || d.Addrs[0].String() != "151.101.0.223" || len(d.Refused) != 1 || d.Refused[0] != (Refusal{own, Own}) {
		t.Errorf("own.test resolving to this host and another: %+v; want the other kept, this host's refused", d)
	}
}

// TestHostRoutes: an address the machine's routes deliver to itself (an
// AnyIP route, a prefix on lo), though no interface has it, is this
// host's: a network's rule does not reach it, one naming it does.
func TestHostRoutes(t *testing.T) {
	lo := netip.MustParsePrefix("10.5.0.0/16")
	h := NewHost(nil).WithRoutes(lo.Contains)
	r, err := NewRules([]string{"own.test"}, nil, []string{"10.0.0.0/8", "10.5.0.7"})
	if err != nil {
		t.Fatal(err)
	}
	for a, want := range map[string]Verdict{"10.5.9.9": DeniedAddress, "10.5.0.7": Allowed, "10.6.0.1": Allowed} {
		addr := netip.MustParseAddr(a)
		if d := r.DecideAddr(addr, 80, h); d.Verdict != want {
			t.Errorf("literal %s: %v, want %s", a, d, want)
		}
		if d := r.Filter(Decision{Verdict: Allowed}, "own.test", 80, []netip.Addr{addr}, h); d.Verdict != want {
			t.Errorf("own.test resolving to %s: %v, want %s", a, d, want)
		}
	}
}
