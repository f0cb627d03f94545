package cage_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// proxyUp is where testDialer sends the stand-in address: macOS configures
// 127.0.0.1 and ::1 on lo0 and no other loopback address, and the run's
// proxy listens on 127.0.0.1, so the upstream is on ::1.
var proxyUp = netip.MustParseAddr("::1")

// TestSeatbeltProxyMode: a caged curl reaches an allowed name through the
// run's proxy (HTTP and SOCKS5), gets the 403 text for a denied one, is
// refused a name resolving to 127.0.0.1, and cannot connect directly to
// the upstream, a loopback server on another port that this process
// reaches: the spawn's profile allows TCP to the run's proxy port only.
// The upstream sees the proxied requests and never the direct one, and
// the run's record says what curl did. Nothing here skips on macOS but a
// sandboxed test process: a Seatbelt that lets the direct connect through,
// or refuses the proxy, fails it.
func TestSeatbeltProxyMode(t *testing.T) {
	testenv.RequireUnsandboxed(t)
	const curl = "/usr/bin/curl" // ships with macOS
	var direct atomic.Int32
	port := testenv.ServeHTTP(t, "[::1]:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/direct" {
			direct.Add(1)
		}
		fmt.Fprintf(w, "upstream %s", r.URL.Path)
	}))
	// Outside the cage the direct connect works: the caged one failing is
	// the profile's doing.
	resp, err := http.Get(fmt.Sprintf("http://[::1]:%d/control", port))
	if err != nil {
		t.Fatalf("the upstream, uncaged: %v", err)
	}
	resp.Body.Close()

	p, err := profile.New(profile.BaseV1, profile.AllowHosts("allowed.test", "local.test"), profile.DenyHosts("denied.test"), profile.Fork())
	if err != nil {
		t.Fatal(err)
	}
	names := testResolver{"allowed.test": {proxyPublic}, "denied.test": {proxyPublic}, "local.test": {netip.MustParseAddr("127.0.0.1")}}
	c, err := cage.New(p, cage.WithProxyNet(names, testDialer{}))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	// The direct connect: Seatbelt refuses it.
	checkProxyCurls(t, c, curl, port, fmt.Sprintf("http://[::1]:%d/direct", port), curlWant{"Failed to connect to ::1", "7"})
	if n := direct.Load(); n != 0 {
		t.Errorf("the upstream served the direct request %d times: the cage let curl connect around the proxy", n)
	}
	checkRunsApart(t, c, curl, port, true)
}
