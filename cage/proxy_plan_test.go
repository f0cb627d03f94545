package cage_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sbpl"
	"github.com/procage-go/procage/profile/seatbelt"
	"github.com/procage-go/procage/profile/sim"
)

// TestSeatbeltProxyPerSpawn: a proxy-mode macOS cage is made (its plan
// names the placeholder port), and each spawn compiles a profile naming
// its own run's proxy port and no other: under every reading of
// Seatbelt's precedence the simulator has, the run's port is reachable,
// the placeholder's and another run's are not, nor any other address. A
// spawn without a port compiles nothing.
func TestSeatbeltProxyPerSpawn(t *testing.T) {
	comp := &countingCompiler{}
	p := mustPolicy(t, profile.AllowHosts("github.com"), profile.Fork(), profile.Read("/Users/me/project"))
	c, err := cage.New(p, simOpts(t, cage.WithCompiler(comp), cage.WithPrivateTemp())...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	placeholder := `(remote tcp "localhost:` + strconv.Itoa(seatbelt.PlaceholderProxyPort) + `")`
	if !strings.Contains(c.Plan(), placeholder) {
		t.Errorf("the plan does not name the placeholder %s:\n%s", placeholder, c.Plan())
	}
	if comp.count() != 1 {
		t.Fatalf("New compiled %d times, want 1 (the check)", comp.count())
	}
	if _, err := c.SpawnCode("/bin/sh", cage.NewMarker(), "/private/tmp/run", 0); err == nil {
		t.Error("a proxy-mode spawn without a port compiled")
	}
	ports := []int{41234, 50001}
	for i, port := range ports {
		if _, err := c.SpawnCode("/bin/sh", cage.NewMarker(), "/private/tmp/run", port); err != nil {
			t.Fatalf("spawn with port %d: %v", port, err)
		}
		text, params := comp.texts[len(comp.texts)-1], comp.params[len(comp.params)-1]
		prof, _, err := sbpl.ReadProfile(text, paramMap(params))
		if err != nil {
			t.Fatalf("port %d: the spawn's profile does not read back: %v", port, err)
		}
		other := ports[1-i]
		cases := []struct {
			addr, proto string
			allowed     bool
		}{
			{"127.0.0.1:" + strconv.Itoa(port), "tcp", true},
			{"[::1]:" + strconv.Itoa(port), "tcp", true},
			{"127.0.0.1:" + strconv.Itoa(port), "udp", false},
			{"127.0.0.1:" + strconv.Itoa(other), "tcp", false}, // another run's proxy
			{"127.0.0.1:" + strconv.Itoa(seatbelt.PlaceholderProxyPort), "tcp", false},
			{"127.0.0.1:" + strconv.Itoa(port+1), "tcp", false},
			{"[::1]:8080", "tcp", false},
			{"93.184.215.14:" + strconv.Itoa(port), "tcp", false}, // a remote host on the proxy's port
			{"93.184.215.14:443", "tcp", false},
		}
		for _, v := range sim.Variants() {
			for _, cs := range cases {
				d, err := v.Decide(prof, sim.Access{Op: "network-outbound", Addr: cs.addr, Proto: cs.proto})
				if err != nil {
					t.Fatalf("variant %v: %s %s: %v", v, cs.proto, cs.addr, err)
				}
				if d.Allowed != cs.allowed {
					t.Errorf("spawn with port %d, variant %v: connect %s %s allowed=%v (%s), want %v", port, v, cs.proto, cs.addr, d.Allowed, d.Text, cs.allowed)
				}
			}
		}
	}
}

func paramMap(ps []libsandbox.Param) map[string]string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.Key] = p.Value
	}
	return m
}
