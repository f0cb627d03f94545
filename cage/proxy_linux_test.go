package cage_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// proxyUp is where testDialer sends the stand-in address: Linux routes
// all of 127.0.0.0/8 to lo.
var proxyUp = netip.MustParseAddr("127.0.0.2")

// TestLinuxProxyMode: a caged curl reaches an allowed name through the
// run's proxy, gets the 403 text for a denied one, is refused a name
// resolving to 127.0.0.1; the run's record says so. The upstream listens
// on 127.0.0.2 on the very port the proxy has: at T2 (the gap
// network-proxy-direct accepted) a direct connect to it gets through, the
// gap open; at T1 the run's own network namespace has no way out but the
// proxy's listener, and no gap is needed.
func TestLinuxProxyMode(t *testing.T) {
	t.Run("T2", func(t *testing.T) { testProxyMode(t, cage.TierT2) })
	t.Run("T1", func(t *testing.T) {
		requireT1(t)
		testProxyMode(t, cage.TierT1)
	})
}

func testProxyMode(t *testing.T, tier cage.LinuxTier) {
	const curl = "/usr/bin/curl"
	testenv.RequireProgram(t, curl)
	port := testenv.ServeHTTP(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream %s", r.URL.Path)
	}))

	p, err := profile.New(profile.BaseV1, profile.AllowHosts("allowed.test", "local.test"), profile.DenyHosts("denied.test"), profile.Fork())
	if err != nil {
		t.Fatal(err)
	}
	names := testResolver{"allowed.test": {proxyPublic}, "denied.test": {proxyPublic}, "local.test": {netip.MustParseAddr("127.0.0.1")}}
	base := []cage.Option{cage.WithLinuxTier(tier), cage.WithProxyNet(names, testDialer{})}
	opts := append(slices.Clip(base), cage.WithProxyPort(port))
	_, err = cage.New(p, opts...)
	skipIfTooOld(t, err)
	switch {
	case tier == cage.TierT2 && !errors.Is(err, cage.ErrGap):
		t.Errorf("New at T2 without the gap accepted: %v, want ErrGap", err)
	case tier == cage.TierT1 && err != nil:
		t.Fatalf("New at T1: %v, want no gap", err)
	}
	if tier == cage.TierT2 {
		gap := cage.AcceptGaps(profile.GapProxyDirect)
		opts, base = append(opts, gap), append(base, gap)
	}
	c, err := cage.New(p, opts...)
	skipIfTooOld(t, err) // T2's process-access scopes need ABI 6
	if err != nil {
		t.Fatal(err)
	}
	if tier == cage.TierT1 && !strings.Contains(c.Plan(), "network namespace: own, lo up; only way out: the run's egress proxy") {
		t.Errorf("T1 plan does not list the network namespace:\n%s", c.Plan())
	}
	direct := curlWant{"upstream /direct", "0"} // T2: the gap, open
	if tier == cage.TierT1 {
		// The run's own 127.0.0.2: nothing listens there.
		direct = curlWant{"Failed to connect to 127.0.0.2", "7"}
	}
	checkProxyCurls(t, c, curl, port, fmt.Sprintf("http://127.0.0.2:%d/direct", port), direct)
	// Runs apart: a cage of the same policy without the fixed port, so
	// run B's own proxy cannot sit on run A's port; at T1 run A's proxy
	// is in its own network namespace, not on the host's loopback.
	apart, err := cage.New(p, base...)
	if err != nil {
		t.Fatal(err)
	}
	checkRunsApart(t, apart, curl, port, tier == cage.TierT2)
}

// requireT1 fails unless this host gives a cage tier T1.
func requireT1(t *testing.T) {
	t.Helper()
	testenv.RequireUserNamespace(t)
	if r := cage.Probe(); r.Tier != "T1" {
		t.Fatalf("tier %s here: %v", r.Tier, r.T1)
	}
}
