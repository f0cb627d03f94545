//go:build linux || darwin

package cage_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
)

// The proxy's names resolve to a stand-in public address, which the
// dialer sends to a server on this machine's loopback (proxyUp, each
// OS's): the test never leaves this machine, and the proxy's address
// check sees what a real name would give.
var proxyPublic = netip.MustParseAddr("93.184.215.14")

type testResolver map[string][]netip.Addr

func (r testResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	// The proxy asks for absolute names ("allowed.test.").
	if a, ok := r[strings.TrimSuffix(host, ".")]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

type testDialer struct{}

func (testDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || ap.Addr() != proxyPublic {
		return nil, fmt.Errorf("testDialer: %s is off this machine", address)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, netip.AddrPortFrom(proxyUp, ap.Port()).String())
}

// checkRunsApart: each run of c has its own proxy and port, and a run's
// confinement does not let it reach another run's proxy, even while that
// proxy listens (with control set, this process reaches it). curl asks allowed.test on
// port through run A's proxy from run B.
func checkRunsApart(t *testing.T, c *cage.Cage, curl string, port int, control bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := c.Command(ctx, "/bin/sh", "-c", `echo "$HTTP_PROXY"; exec /bin/sleep 60`)
	stdout, err := a.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Kill(); _ = a.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("run A's proxy variable: %v", err)
	}
	aProxy := strings.TrimSpace(line) // http://USER:PASS@127.0.0.1:PORT
	au, err := url.Parse(aProxy)
	if err != nil {
		t.Fatal(err)
	}
	aAddr := au.Host
	b := c.Command(ctx, curl, "-sS", "--max-time", "10", "--proxy", aProxy, fmt.Sprintf("http://allowed.test:%d/b", port))
	var outB bytes.Buffer
	b.Stdout, b.Stderr = &outB, &outB
	if err := b.Run(); err == nil || !strings.Contains(outB.String(), "Failed to connect to 127.0.0.1") {
		t.Errorf("run B through run A's proxy %s: %v\n%s", aProxy, err, outB.String())
	}
	if l := a.NetLog(); len(l) != 0 {
		t.Errorf("run A's proxy served run B: %+v", l)
	}
	if l := b.NetLog(); len(l) != 0 {
		t.Errorf("run B's record: %+v", l)
	}
	if !control {
		return // run A's proxy is not on the host's loopback at all
	}
	// Control, after the records: run A's proxy was there to reach.
	conn, err := net.Dial("tcp", aAddr)
	if err != nil {
		t.Fatalf("run A's proxy %q, uncaged: %v", aProxy, err)
	}
	conn.Close()
}

// curlWant is what one curl of checkProxyCurls prints, and its exit status.
type curlWant struct{ out, exit string }

// checkProxyCurls runs five curls in one run of c, the upstream on port:
// allowed.test through the run's HTTP proxy, denied.test, local.test
// (resolving to 127.0.0.1), directURL around the proxy (which must give
// direct), and allowed.test through the run's SOCKS5 proxy. Each prints
// what it is to print and exits as it is to exit, and the run's record
// lists the four proxied requests.
func checkProxyCurls(t *testing.T, c *cage.Cage, curl string, port int, directURL string, direct curlWant) {
	t.Helper()
	// -g: directURL may be an IPv6 literal, which curl's globbing takes
	// for a range.
	script := fmt.Sprintf(`%[1]s -sS --max-time 10 http://allowed.test:%[2]d/ok; echo "|exit=$?"
%[1]s -sS --max-time 10 http://denied.test:%[2]d/; echo "|exit=$?"
%[1]s -sS --max-time 10 http://local.test:%[2]d/; echo "|exit=$?"
%[1]s -sS -g --max-time 10 --noproxy '*' %[3]s; echo "|exit=$?"
%[1]s -sS --max-time 10 --proxy socks5h://$(echo $ALL_PROXY | cut -d/ -f3) http://allowed.test:%[2]d/socks; echo "|exit=$?"
`, curl, port, directURL)
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
	for i, w := range []curlWant{
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
}
