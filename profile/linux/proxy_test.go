package linux_test

import (
	"errors"
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
