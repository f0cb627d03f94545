package cage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

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
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream %s", r.URL.Path)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	p, err := profile.New(profile.BaseV1, profile.AllowHosts("allowed.test", "local.test"), profile.DenyHosts("denied.test"), profile.Fork())
	if err != nil {
		t.Fatal(err)
	}
	names := testResolver{"allowed.test": {proxyPublic}, "denied.test": {proxyPublic}, "local.test": {netip.MustParseAddr("127.0.0.1")}}
	opts := []cage.Option{cage.WithLinuxTier(tier), cage.WithProxyNet(names, testDialer{}), cage.WithProxyPort(port)}
	_, err = cage.New(p, opts...)
	skipIfTooOld(t, err)
	switch {
	case tier == cage.TierT2 && !errors.Is(err, cage.ErrGap):
		t.Errorf("New at T2 without the gap accepted: %v, want ErrGap", err)
	case tier == cage.TierT1 && err != nil:
		t.Fatalf("New at T1: %v, want no gap", err)
	}
	if tier == cage.TierT2 {
		opts = append(opts, cage.AcceptGaps(profile.GapProxyDirect))
	}
	c, err := cage.New(p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if tier == cage.TierT1 && !strings.Contains(c.Plan(), "network namespace: own, lo up; only way out: the run's egress proxy") {
		t.Errorf("T1 plan does not list the network namespace:\n%s", c.Plan())
	}
	script := fmt.Sprintf(`%[1]s -sS --max-time 10 http://allowed.test:%[2]d/ok; echo "|exit=$?"
%[1]s -sS --max-time 10 http://denied.test:%[2]d/; echo "|exit=$?"
%[1]s -sS --max-time 10 http://local.test:%[2]d/; echo "|exit=$?"
%[1]s -sS --max-time 10 --noproxy '*' http://127.0.0.2:%[2]d/direct; echo "|exit=$?"
%[1]s -sS --max-time 10 --proxy socks5h://$(echo $ALL_PROXY | cut -d/ -f3) http://allowed.test:%[2]d/socks; echo "|exit=$?"
`, curl, port)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.Command(ctx, "/bin/sh", "-c", script)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HTTP_PROXY=http://10.9.9.9:1"} // the cage's variables win
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	t.Logf("caged curl at %v:\n%s", tier, out.String())
	// One part per curl: its output, then |exit=STATUS.
	parts := strings.Split(out.String(), "|exit=")
	if len(parts) != 6 {
		t.Fatalf("output:\n%s", out.String())
	}
	direct := struct{ out, exit string }{"upstream /direct", "0"} // T2: the gap, open
	if tier == cage.TierT1 {
		// The run's own 127.0.0.2: nothing listens there.
		direct = struct{ out, exit string }{"Failed to connect to 127.0.0.2", "7"}
	}
	for i, w := range []struct{ out, exit string }{
		{"upstream /ok", "0"},
		{"denied.test:" + fmt.Sprint(port) + " refused: host denied.test is denied by rule denied.test", "0"},
		{"host local.test resolves to 127.0.0.1 (loopback), which no address rule allows; allow the address with --allow-address 127.0.0.1", "0"},
		direct,
		{"upstream /socks", "0"},
	} {
		body := parts[i]
		if i > 0 {
			_, body, _ = strings.Cut(body, "\n") // the previous exit status
		}
		if !strings.Contains(body, w.out) || !strings.HasPrefix(parts[i+1], w.exit+"\n") {
			t.Errorf("curl %d: %q, exit %q; want %q, exit %s", i, body, parts[i+1], w.out, w.exit)
		}
	}
	log := cmd.NetLog()
	var got []string
	for _, r := range log {
		got = append(got, fmt.Sprintf("%s %s %s %s", r.Proto, r.Method, r.Host, r.Verdict))
	}
	wantLog := []string{
		"http GET allowed.test allowed",
		"http GET denied.test denied-by-rule",
		"http GET local.test denied-address",
		"socks5 CONNECT allowed.test allowed",
	}
	if strings.Join(got, "\n") != strings.Join(wantLog, "\n") {
		t.Errorf("NetLog:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantLog, "\n"))
	}
	if len(log) == 4 && (log[0].Received != int64(len("upstream /ok")) || log[0].Addr.Addr() != proxyPublic) {
		t.Errorf("record: %+v", log[0])
	}
	// Runs apart: a cage of the same policy without the fixed port, so
	// run B's own proxy cannot sit on run A's port; at T1 run A's proxy
	// is in its own network namespace, not on the host's loopback.
	apart, err := cage.New(p, append(opts[:2:2], opts[3:]...)...)
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
