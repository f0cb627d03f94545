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

// TestLinuxProxyMode: a caged curl (T2, the gap network-proxy-direct
// accepted) reaches an allowed name through the run's proxy, gets the 403
// text for a denied one, is refused a name resolving to 127.0.0.1, and
// cannot connect directly to the upstream; the run's record says so.
func TestLinuxProxyMode(t *testing.T) {
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
	if _, err := cage.New(p); !errors.Is(err, cage.ErrGap) {
		t.Errorf("New without the gap accepted: %v, want ErrGap", err)
	}
	names := testResolver{"allowed.test": {proxyPublic}, "denied.test": {proxyPublic}, "local.test": {netip.MustParseAddr("127.0.0.1")}}
	c, err := cage.New(p, cage.AcceptGaps(profile.GapProxyDirect), cage.WithProxyNet(names, testDialer{}))
	skipIfTooOld(t, err)
	if err != nil {
		t.Fatal(err)
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
	t.Logf("caged curl:\n%s", out.String())
	// One part per curl: its output, then |exit=STATUS.
	parts := strings.Split(out.String(), "|exit=")
	if len(parts) != 6 {
		t.Fatalf("output:\n%s", out.String())
	}
	for i, w := range []struct{ out, exit string }{
		{"upstream /ok", "0"},
		{"denied.test:" + fmt.Sprint(port) + " refused: host denied.test is denied by rule denied.test", "0"},
		{"host local.test resolves to 127.0.0.1 (loopback), which no address rule allows; allow the address with --allow-address 127.0.0.1", "0"},
		{"Failed to connect to 127.0.0.2", "7"}, // the direct connect: Landlock refuses the port
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
	checkRunsApart(t, c, curl, port)
}
