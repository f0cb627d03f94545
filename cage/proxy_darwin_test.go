package cage_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Fatalf("the upstream on ::1: %v", err)
	}
	var direct atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/direct" {
			direct.Add(1)
		}
		fmt.Fprintf(w, "upstream %s", r.URL.Path)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
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
	script := fmt.Sprintf(`%[1]s -sS --max-time 10 http://allowed.test:%[2]d/ok; echo "|exit=$?"
%[1]s -sS --max-time 10 http://denied.test:%[2]d/; echo "|exit=$?"
%[1]s -sS --max-time 10 http://local.test:%[2]d/; echo "|exit=$?"
%[1]s -sS -g --max-time 10 --noproxy '*' http://[::1]:%[2]d/direct; echo "|exit=$?"
%[1]s -sS --max-time 10 --proxy socks5h://$(echo $ALL_PROXY | /usr/bin/cut -d/ -f3) http://allowed.test:%[2]d/socks; echo "|exit=$?"
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
	t.Logf("caged curl:\n%s", out.String())
	parts := strings.Split(out.String(), "|exit=")
	if len(parts) != 6 {
		t.Fatalf("output:\n%s", out.String())
	}
	for i, w := range []struct{ out, exit string }{
		{"upstream /ok", "0"},
		{"denied.test:" + fmt.Sprint(port) + " refused: host denied.test is denied by rule denied.test", "0"},
		{"host local.test resolves to 127.0.0.1 (loopback), which no address rule allows; allow the address with --allow-address 127.0.0.1", "0"},
		{"Failed to connect to ::1", "7"}, // the direct connect: Seatbelt refuses it
		{"upstream /socks", "0"},
	} {
		body := parts[i]
		if i > 0 {
			_, body, _ = strings.Cut(body, "\n")
		}
		if !strings.Contains(body, w.out) || !strings.HasPrefix(parts[i+1], w.exit+"\n") {
			t.Errorf("curl %d: %q, exit %q; want %q, exit %s", i, body, parts[i+1], w.out, w.exit)
		}
	}
	if n := direct.Load(); n != 0 {
		t.Errorf("the upstream served the direct request %d times: the cage let curl connect around the proxy", n)
	}
	var got []string
	log := cmd.NetLog()
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

	checkRunsApart(t, c, curl, port, true)
}
