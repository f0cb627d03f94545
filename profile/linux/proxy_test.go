package linux_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// TestProxyGap: proxy mode is refused by name without a network namespace
// (Landlock's TCP rules are per port, so a remote host on the proxy's port
// is reachable directly); accepted, TCP connects to the proxy's port only
// and binds nothing.
func TestProxyGap(t *testing.T) {
	p, err := profile.New(profile.BaseV1, profile.AllowHosts("github.com"))
	if err != nil {
		t.Fatal(err)
	}
	env := linux.Env{Env: profile.Env{Home: "/home/me", ProxyPort: 41234}}
	_, err = linux.Lower(p, env)
	var ge *profile.GapError
	if !errors.As(err, &ge) || !ge.Has(profile.GapProxyDirect) || len(ge.Parts) != 1 {
		t.Fatalf("Lower: %v, want the gap %s alone", err, profile.GapProxyDirect)
	}
	env.Accept = []profile.Gap{profile.GapProxyDirect}
	pl, err := linux.Lower(p, env)
	if err != nil {
		t.Fatal(err)
	}
	if pl.MinABI < 4 || len(pl.NetRules) != 1 || pl.NetRules[0] != (linux.NetRule{Port: 41234, Access: linux.NetConnectTCP}) {
		t.Errorf("MinABI %d, NetRules %+v", pl.MinABI, pl.NetRules)
	}
	for _, c := range []struct {
		op   linux.Op
		host string
		port uint16
		want bool
	}{
		{linux.OpConnect, "127.0.0.1", 41234, true},
		{linux.OpConnect, "140.82.112.3", 41234, true}, // the gap: any host on that port
		{linux.OpConnect, "140.82.112.3", 443, false},
		{linux.OpConnect, "127.0.0.1", 22, false},
		{linux.OpBind, "127.0.0.1", 41234, false},
	} {
		d, err := pl.Decide(linux.Access{Op: c.op, Host: c.host, Port: c.port})
		if err != nil {
			t.Fatal(err)
		}
		if d.Allowed != c.want || (d.Allowed && (len(d.Gaps) != 1 || d.Gaps[0].Gap != profile.GapProxyDirect)) {
			t.Errorf("%v %s:%d: %v (gaps %v), want %v", c.op, c.host, c.port, d.Allowed, d.Gaps, c.want)
		}
	}
	// Before the run's proxy has a port, no TCP port at all.
	env.ProxyPort = 0
	if pl, err := linux.Lower(p, env); err != nil || len(pl.NetRules) != 0 || pl.HandledNet&linux.NetConnectTCP == 0 {
		t.Errorf("without a port: %v, %+v", err, pl)
	}
}

// TestT1NetNamespace: at T1 loopback (named ports) and proxy mode get the
// run's own network namespace and no gap; network on keeps the host's
// (and its gap), as does loopback with every port; T2 keeps the gaps.
func TestT1NetNamespace(t *testing.T) {
	env := linux.Env{Env: profile.Env{Home: "/home/me", ProxyPort: 41234}, Tier: linux.TierT1}
	for _, c := range []struct {
		name string
		opts []profile.Option
		ns   bool
		gap  profile.Gap
	}{
		{"off", nil, true, ""},
		{"loopback", []profile.Option{profile.Network(profile.NetworkLoopback, 5432, 6379)}, true, ""},
		{"loopback-any", []profile.Option{profile.Network(profile.NetworkLoopback, profile.AnyPort)}, false, profile.GapLoopback},
		{"proxy", []profile.Option{profile.AllowHosts("github.com")}, true, ""},
		{"on", []profile.Option{profile.Network(profile.NetworkOn)}, false, profile.GapLocalServices},
	} {
		p, err := profile.New(profile.BaseV1, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := linux.Lower(p, env)
		var ge *profile.GapError
		switch {
		case c.gap == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
			continue
		case c.gap != "" && (!errors.As(err, &ge) || !ge.Has(c.gap)):
			t.Errorf("%s: %v, want gap %s", c.name, err, c.gap)
		}
		if (pl.NetNS != nil) != c.ns {
			t.Errorf("%s: NetNS %v, want own %v", c.name, pl.NetNS, c.ns)
		}
		t2 := env
		t2.Tier = linux.TierT2
		if pl2, _ := linux.Lower(p, t2); pl2.NetNS != nil {
			t.Errorf("%s at T2: NetNS %v", c.name, pl2.NetNS)
		}
	}
	p, err := profile.New(profile.BaseV1, profile.Network(profile.NetworkLoopback, 5432))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := linux.Lower(p, env)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(pl.String(), "TCP port rules") || pl.HandledNet != 0 || len(pl.NetNS.HostPorts) != 1 || pl.NetNS.HostPorts[0] != 5432 {
		t.Errorf("loopback at T1: HandledNet %v, NetNS %+v\n%s", pl.HandledNet, pl.NetNS, pl)
	}
	for _, c := range []struct {
		op    linux.Op
		host  string
		port  uint16
		errno linux.Errno
	}{
		{linux.OpConnect, "127.0.0.1", 5432, 0}, // forwarded to the host's
		{linux.OpConnect, "127.0.0.1", 8080, 0}, // the run's own server, if it has one
		{linux.OpBind, "127.0.0.1", 8080, 0},    // its own lo
		{linux.OpConnect, "10.0.0.1", 5432, linux.ENETUNREACH},
	} {
		d, err := pl.Decide(linux.Access{Op: c.op, Host: c.host, Port: c.port})
		if err != nil {
			t.Fatal(err)
		}
		if d.Errno != c.errno || d.Allowed != (c.errno == 0) || len(d.Gaps) != 0 {
			t.Errorf("%v %s:%d: %s, want errno %v", c.op, c.host, c.port, d, c.errno)
		}
	}
}
