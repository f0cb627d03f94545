package sim

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
)

// TestNetworkProxy: a proxy-mode profile reaches the run's proxy by TCP on
// its localhost port and nothing else: no other port, no remote host, no
// UDP, no DNS, no Unix socket (connecting to ssh-agent's is
// network-outbound too: eugene1g/agent-safehouse#36), no listening. The
// lowered profile and the reference agree on each case, under every
// reading of Seatbelt's precedence.
func TestNetworkProxy(t *testing.T) {
	env := profile.Env{Home: "/Users/me", ProxyPort: 41234}
	p := mustPolicy(t, profile.AllowHosts("github.com", "*.pythonhosted.org"), profile.Read("/Users/me/project"))
	plan, err := seatbelt.Lower(p, env)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		access  Access
		allowed bool
	}{
		{Access{Op: "network-outbound", Addr: "127.0.0.1:41234"}, true},
		{Access{Op: "network-outbound", Addr: "localhost:41234"}, true},
		{Access{Op: "network-outbound", Addr: "[::1]:41234"}, true},
		{Access{Op: "network-outbound", Addr: "127.0.0.1:41235"}, false},
		{Access{Op: "network-outbound", Addr: "127.0.0.1:22"}, false},
		{Access{Op: "network-outbound", Addr: "140.82.112.3:443"}, false},
		{Access{Op: "network-outbound", Addr: "140.82.112.3:41234"}, false}, // a remote host on the proxy's port
		{Access{Op: "network-outbound", Addr: "169.254.169.254:80"}, false},
		{Access{Op: "network-outbound", Addr: "127.0.0.1:41234", Proto: "udp"}, false},
		{Access{Op: "network-outbound", Addr: "8.8.8.8:53", Proto: "udp"}, false},
		{Access{Op: "network-outbound", Addr: "/private/var/run/mDNSResponder"}, false},
		{Access{Op: "network-outbound", Addr: "/private/tmp/com.apple.launchd.x/Listeners"}, false},
		{Access{Op: "network-bind", Addr: "127.0.0.1:41234"}, false},
		{Access{Op: "network-bind", Addr: "0.0.0.0:8080"}, false},
		{Access{Op: "network-inbound", Addr: "127.0.0.1:41234"}, false},
		{Access{Op: "system-socket", SocketDomain: socketDomains["AF_INET"]}, true},
		{Access{Op: "system-socket", SocketDomain: socketDomains["AF_INET6"]}, true},
		{Access{Op: "mach-lookup", Name: "com.apple.trustd.agent"}, true},
		{Access{Op: "mach-lookup", Name: "com.apple.dnssd.service"}, false},
		{Access{Op: "mach-lookup", Name: "com.apple.SystemConfiguration.configd"}, false},
		{Access{Op: "file-read-data", Path: "/private/etc/ssl/cert.pem"}, true},
		{Access{Op: "file-read-data", Path: "/private/etc/resolv.conf"}, false},
	}
	for _, c := range cases {
		allowed, why := Reference(p, env, c.access)
		if allowed != c.allowed {
			t.Errorf("%+v: reference says %v (%s), want %v", c.access, allowed, why, c.allowed)
		}
		if err := checkCase(p, env, plan, c.access); err != nil {
			t.Error(err)
		}
	}
	// The profile names the port by its remote address only: no local
	// filter on outbound (sandbox-runtime#131), no ip or udp form.
	text := plan.Text()
	if !strings.Contains(text, `(allow network-outbound (remote tcp "localhost:41234"))`) {
		t.Errorf("no remote tcp rule for the proxy:\n%s", text)
	}
	for _, bad := range []string{"(local ip", "(local tcp", `(remote ip "localhost`, "udp", `"*:*"`} {
		if strings.Contains(text, bad) {
			t.Errorf("profile has %q:\n%s", bad, text)
		}
	}
}

// TestNetworkProxyNeedsPort: without the proxy's port there is no
// profile, never one with a broader rule.
func TestNetworkProxyNeedsPort(t *testing.T) {
	p := mustPolicy(t, profile.AllowHosts("github.com"))
	for _, port := range []int{0, -1, 65536} {
		if plan, err := seatbelt.Lower(p, profile.Env{Home: "/Users/me", ProxyPort: port}); err == nil {
			t.Errorf("port %d lowered:\n%s", port, plan.Text())
		}
	}
}

// TestNetworkProxyPerSpawn: the profiles a cage compiles per spawn (the
// policy lowered again with each run's proxy port, beside the per-spawn
// parameters of a forking run with a private temporary directory) each
// reach their own run's proxy port and no other: not another run's, not
// the placeholder a plan shows (seatbelt.PlaceholderProxyPort), not the
// next port, under every reading of Seatbelt's precedence the simulator
// has. The placeholder profile reaches only the placeholder port.
func TestNetworkProxyPerSpawn(t *testing.T) {
	p := mustPolicy(t, profile.AllowHosts("github.com"), profile.Fork(), profile.Read("/Users/me/project"))
	ports := []int{seatbelt.PlaceholderProxyPort, 41234, 50001}
	for _, port := range ports {
		env := profile.Env{Home: "/Users/me", ProxyPort: port, PrivateTemp: true}
		plan, err := seatbelt.Lower(p, env)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(plan.Params, seatbelt.ParamRunMarker) || !slices.Contains(plan.Params, seatbelt.ParamPrivateTemp) {
			t.Fatalf("port %d: params %v", port, plan.Params)
		}
		for _, other := range append(ports, port+1, 443, 8080) {
			for _, addr := range []string{"127.0.0.1", "[::1]"} {
				a := Access{Op: "network-outbound", Addr: fmt.Sprintf("%s:%d", addr, other)}
				want := other == port
				for _, v := range Variants() {
					d, err := v.Decide(plan.Profile, a)
					if err != nil {
						t.Fatal(err)
					}
					if d.Allowed != want {
						t.Errorf("spawn with port %d, variant %v: %s allowed=%v (%s), want %v", port, v, a.Addr, d.Allowed, d.Text, want)
					}
				}
				if err := checkCase(p, env, plan, a); err != nil {
					t.Error(err)
				}
			}
		}
	}
}
