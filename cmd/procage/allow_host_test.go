package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAllowHostFlags: --allow-host, --deny-host and --allow-address make a
// proxy-mode policy, saved as version 3; bad patterns name the flag.
func TestAllowHostFlags(t *testing.T) {
	// At T2, where proxy mode is a gap (T1 runs it in the run's own
	// network namespace).
	code, out, errOut := runCLI(t, "plan", "--backend", "linux", "--tier", "t2", "--home", "/home/me", "--json",
		"--allow-host", "GitHub.com", "--allow-host", "*.pythonhosted.org", "--deny-host", "gist.github.com", "--allow-address", "127.0.0.1:8080")
	if code != 0 {
		t.Fatalf("plan: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "--accept-gap network-proxy-direct") {
		t.Errorf("no gap warning: %s", errOut)
	}
	var plan struct {
		Policy struct {
			Version int `json:"version"`
			Network struct {
				Mode       string   `json:"mode"`
				AllowHosts []string `json:"allow_hosts"`
				DenyHosts  []string `json:"deny_hosts"`
				AllowAddrs []string `json:"allow_addresses"`
			} `json:"network"`
		} `json:"policy"`
	}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	n := plan.Policy.Network
	if plan.Policy.Version != 3 || n.Mode != "proxy" || strings.Join(n.AllowHosts, " ") != "*.pythonhosted.org github.com" ||
		strings.Join(n.DenyHosts, " ") != "gist.github.com" || strings.Join(n.AllowAddrs, " ") != "127.0.0.1:8080" {
		t.Errorf("policy: %+v", plan.Policy)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--allow-host", "10.0.0.1"}, `procage plan: --allow-host "10.0.0.1": an IP address, not a host name (allow an address with AllowAddresses; procage: --allow-address)`},
		{[]string{"--allow-host", "*.com"}, `procage plan: --allow-host "*.com": not a host pattern`},
		{[]string{"--allow-host", "github.com", "--network", "on"}, "procage plan: --allow-host: host and address rules need network mode proxy, not on"},
		{[]string{"--deny-host", "github.com"}, "procage plan: --allow-host: proxy mode names the hosts it allows"},
		{[]string{"--allow-host", "github.com", "--allow-address", "github.com"}, `procage plan: --allow-address "github.com": not an IP address or prefix`},
	} {
		code, _, errOut := runCLI(t, append([]string{"plan", "--backend", "linux"}, c.args...)...)
		if code != 125 || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 125, %q", c.args, code, errOut, c.want)
		}
	}
}
