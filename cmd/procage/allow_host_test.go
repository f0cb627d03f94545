package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/procage-go/procage/profile/sbpl"
	"github.com/procage-go/procage/profile/seatbelt"
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

// TestPlanProxyMode: plan shows a proxy-mode policy on both backends, with
// a note that the proxy's port is chosen per run. The macOS plan names the
// placeholder port in its one remote filter and is still a profile that
// reads back whole; --json says which port stands in.
func TestPlanProxyMode(t *testing.T) {
	code, out, errOut := runCLI(t, "plan", "--backend", "macos", "--allow-host", "example.com")
	if code != 0 {
		t.Fatalf("plan --backend macos: exit %d: %s", code, errOut)
	}
	note := "; egress proxy: its port is chosen when each run starts; this plan names localhost:1 in its place, each spawn's profile the run's port\n"
	if !strings.Contains(out, note) {
		t.Errorf("macOS plan without the note %q:\n%s", note, out)
	}
	if strings.Count(out, "(remote tcp") != 1 || !strings.Contains(out, `(allow network-outbound (remote tcp "localhost:1"))`) {
		t.Errorf("macOS plan's proxy rule:\n%s", out)
	}
	if _, err := sbpl.Parse(out); err != nil {
		t.Errorf("the printed macOS plan does not read back: %v", err)
	}
	code, out, errOut = runCLI(t, "plan", "--backend", "macos", "--allow-host", "example.com", "--json")
	var plan struct {
		Placeholder int `json:"proxy_port_placeholder"`
	}
	if err := json.Unmarshal([]byte(out), &plan); code != 0 || err != nil || plan.Placeholder != seatbelt.PlaceholderProxyPort {
		t.Errorf("plan --json: exit %d, %v, placeholder %d: %s", code, err, plan.Placeholder, errOut)
	}
	code, out, errOut = runCLI(t, "plan", "--backend", "linux", "--home", "/home/me", "--allow-host", "example.com")
	if code != 0 || !strings.Contains(out, "# egress proxy: its port is chosen when each run starts, the only TCP port the child may connect to\n") {
		t.Errorf("plan --backend linux: exit %d: %s\n%s", code, errOut, out)
	}
	// Another mode has no note.
	if _, out, _ := runCLI(t, "plan", "--backend", "macos"); strings.Contains(out, "egress proxy") {
		t.Errorf("a plan without proxy mode notes one:\n%s", out)
	}
}
