package egress

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/procage-go/procage/internal/egress/hostrule"
)

func get(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: body: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// find returns the records for host.
func find(recs []Request, host string) []Request {
	var out []Request
	for _, r := range recs {
		if r.Host == host {
			out = append(out, r)
		}
	}
	return out
}

func TestGoClient(t *testing.T) {
	a := upstream(t, lo2, "A", false)
	b := upstream(t, lo3, "B", false)
	six := upstream(t, lo6, "SIX", false)
	tlsA := upstream(t, lo2, "TLS", true)
	f := startProxy(t, []string{"allowed.test", "*.allowed.test", "v6.test", "local.test", "meta.test", "mapped.test", "ula.test", "mixed.test", "lo3.test", "example.com"},
		[]string{"denied.test"}, nil, defaultNames())
	roots := x509.NewCertPool()
	roots.AddCert(tlsA.Certificate())
	c := proxyClient(f, &tls.Config{RootCAs: roots})
	defer c.CloseIdleConnections()

	pa, pb := port(t, a), port(t, b)
	if code, body := get(t, c, fmt.Sprintf("http://allowed.test:%d/x", pa)); code != 200 || body != "A GET /x body=0" {
		t.Errorf("allowed.test: %d %q", code, body)
	}
	if code, body := get(t, c, fmt.Sprintf("http://WWW.Allowed.Test:%d/y", pa)); code != 200 || body != "A GET /y body=0" {
		t.Errorf("www.allowed.test: %d %q", code, body)
	}
	resp, err := c.Post(fmt.Sprintf("http://allowed.test:%d/p", pa), "text/plain", strings.NewReader("12345"))
	if err != nil {
		t.Fatal(err)
	}
	pbody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(pbody) != "A POST /p body=5" {
		t.Errorf("POST: %q", pbody)
	}
	if code, body := get(t, c, fmt.Sprintf("http://v6.test:%d/", port(t, six))); code != 200 || body != "SIX GET / body=0" {
		t.Errorf("v6.test: %d %q", code, body)
	}
	if code, body := get(t, c, fmt.Sprintf("https://example.com:%d/tls", port(t, tlsA))); code != 200 || body != "TLS GET /tls body=0" {
		t.Errorf("CONNECT example.com: %d %q", code, body)
	}
	// Refusals: the 403 names the host and the flag.
	for _, c2 := range []struct{ host, want string }{
		{"denied.test", "denied by rule denied.test"},
		{"other.test", "--allow-host other.test"},
		{"local.test", "resolves to 127.0.0.1 (loopback)"},
		{"meta.test", "169.254.169.254 (cloud metadata)"},
		{"mapped.test", "resolves to 127.0.0.1 (loopback)"},
		{"ula.test", "fd00::1 (private)"},
		{"lo3.test", "--allow-address 127.0.0.3"},
		{"nosuch.test", "--allow-host nosuch.test"},
	} {
		code, body := get(t, c, fmt.Sprintf("http://%s:%d/", c2.host, pb))
		if code != 403 || !strings.Contains(body, c2.want) || !strings.Contains(body, c2.host) {
			t.Errorf("%s: %d %q, want 403 with %q", c2.host, code, body, c2.want)
		}
	}
	// A name with a special address and a public one: the public one only.
	if code, body := get(t, c, fmt.Sprintf("http://mixed.test:%d/m", pa)); code != 200 || body != "A GET /m body=0" {
		t.Errorf("mixed.test: %d %q", code, body)
	}
	// CONNECT to a denied host: 403, the client sees an error.
	if _, err := c.Get(fmt.Sprintf("https://denied.test:%d/", port(t, tlsA))); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("CONNECT denied.test: %v", err)
	}
	c.CloseIdleConnections()
	if err := f.p.Stop(); err != nil {
		t.Fatal(err)
	}
	recs := f.p.Records()
	check := func(host string, n int, v hostrule.Verdict, rule string) []Request {
		t.Helper()
		got := find(recs, host)
		if len(got) != n {
			t.Fatalf("%s: %d records, want %d: %v", host, len(got), n, got)
		}
		for _, r := range got {
			if r.Verdict != v || r.Rule != rule {
				t.Errorf("%s: %s by %q, want %s by %q", host, r.Verdict, r.Rule, v, rule)
			}
		}
		return got
	}
	ar := check("allowed.test", 2, hostrule.Allowed, "allowed.test")
	if ar[0].Method != "GET" || ar[0].Proto != ProtoHTTP || ar[0].Received != int64(len("A GET /x body=0")) || ar[0].Addr != netip.AddrPortFrom(pubA, uint16(pa)) || ar[0].Status != 200 {
		t.Errorf("GET record: %+v", ar[0])
	}
	// Sent: the body's 5 bytes and the request line and headers.
	if ar[1].Method != "POST" || ar[1].Sent < 5+int64(len("POST / HTTP/1.1\r\n")) || ar[1].Received != int64(len(pbody)) {
		t.Errorf("POST record: %+v", ar[1])
	}
	check("www.allowed.test", 1, hostrule.Allowed, "*.allowed.test")
	check("v6.test", 1, hostrule.Allowed, "v6.test")
	ex := check("example.com", 1, hostrule.Allowed, "example.com")
	if ex[0].Proto != ProtoConnect || ex[0].Method != "CONNECT" || ex[0].Sent == 0 || ex[0].Received == 0 || ex[0].Status != 200 {
		t.Errorf("CONNECT record: %+v", ex[0])
	}
	check("denied.test", 2, hostrule.DeniedByRule, "denied.test")
	check("other.test", 1, hostrule.DeniedNoRule, "")
	for _, h := range []string{"local.test", "meta.test", "mapped.test", "ula.test", "lo3.test"} {
		check(h, 1, hostrule.DeniedAddress, h)
	}
	check("nosuch.test", 1, hostrule.DeniedNoRule, "")
	mixed := check("mixed.test", 1, hostrule.Allowed, "mixed.test")
	if mixed[0].Addr.Addr() != pubA {
		t.Errorf("mixed.test dialed %v", mixed[0].Addr)
	}
	// The proxy dialed only checked public addresses: none it refused.
	for _, ap := range f.dl.all() {
		if ap.Addr() != pubA && ap.Addr() != pub6 {
			t.Errorf("dialed %s", ap)
		}
	}
	if len(recs) != 15 {
		t.Errorf("%d records, want 15", len(recs))
	}
}

// TestAddressAllowed: a name resolving to a loopback address reaches it
// once the address is allowed, and an address literal needs its rule.
func TestAddressAllowed(t *testing.T) {
	s := upstream(t, lo3, "LO3", false)
	f := startProxy(t, []string{"lo3.test", "local.test"}, nil, []string{"127.0.0.3"}, defaultNames())
	c := proxyClient(f, nil)
	defer c.CloseIdleConnections()
	ps := port(t, s)
	if code, body := get(t, c, fmt.Sprintf("http://lo3.test:%d/", ps)); code != 200 || body != "LO3 GET / body=0" {
		t.Errorf("lo3.test: %d %q", code, body)
	}
	if code, body := get(t, c, fmt.Sprintf("http://127.0.0.3:%d/", ps)); code != 200 || body != "LO3 GET / body=0" {
		t.Errorf("127.0.0.3: %d %q", code, body)
	}
	// 127.0.0.1 is allowed by no address rule: refused, never dialed.
	if code, body := get(t, c, fmt.Sprintf("http://local.test:%d/", ps)); code != 403 || !strings.Contains(body, "--allow-address 127.0.0.1") {
		t.Errorf("local.test: %d %q", code, body)
	}
	if code, body := get(t, c, fmt.Sprintf("http://127.0.0.2:%d/", ps)); code != 403 || !strings.Contains(body, "--allow-address 127.0.0.2") {
		t.Errorf("127.0.0.2: %d %q", code, body)
	}
	for _, ap := range f.dl.all() {
		if ap.Addr() != lo3 {
			t.Errorf("dialed %s", ap)
		}
	}
}

// TestRebinding: the proxy resolves a name once per request and dials
// what it checked, whatever a second lookup would say.
func TestRebinding(t *testing.T) {
	s := upstream(t, lo2, "A", false)
	f := startProxy(t, []string{"rebind.test"}, nil, nil, nil)
	f.res.m["rebind.test"] = [][]netip.Addr{{pubA}, {local}, {pubA}, {local}}
	c := proxyClient(f, nil)
	defer c.CloseIdleConnections()
	if code, _ := get(t, c, fmt.Sprintf("http://rebind.test:%d/", port(t, s))); code != 200 {
		t.Errorf("first: %d", code)
	}
	if n := f.res.lookups("rebind.test"); n != 1 {
		t.Errorf("%d lookups for one request", n)
	}
	c.CloseIdleConnections()
	if code, _ := get(t, c, fmt.Sprintf("http://rebind.test:%d/", port(t, s))); code != 403 {
		t.Errorf("second (resolves to 127.0.0.1): %d", code)
	}
	if n := f.res.lookups("rebind.test"); n != 2 {
		t.Errorf("%d lookups for two requests", n)
	}
	for _, ap := range f.dl.all() {
		if ap.Addr() != pubA {
			t.Errorf("dialed %s", ap)
		}
	}
}

// socksDial performs a SOCKS5 CONNECT by hand; atyp 3 sends host as a
// name, 1 and 4 as an address. It returns the reply code and the conn.
func socksDial(t *testing.T, p *Proxy, cmd, atyp byte, host string, port int) (byte, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	req := append([]byte(socksLogin(p.Credential())), 5, cmd, 0, atyp)
	switch atyp {
	case 3:
		req = append(req, byte(len(host)))
		req = append(req, host...)
	default:
		a := netip.MustParseAddr(host)
		req = append(req, a.AsSlice()...)
	}
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	var hello [4]byte
	if _, err := io.ReadFull(c, hello[:]); err != nil || hello != [4]byte{5, 2, 1, 0} {
		t.Fatalf("greeting and login: % x, %v", hello, err)
	}
	var rep [4]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		t.Fatalf("reply: %v", err)
	}
	n := 4
	if rep[3] == 4 {
		n = 16
	}
	if _, err := io.ReadFull(c, make([]byte, n+2)); err != nil {
		t.Fatalf("reply address: %v", err)
	}
	return rep[1], c
}

func TestSOCKS(t *testing.T) {
	a := upstream(t, lo2, "A", false)
	lo3s := upstream(t, lo3, "LO3", false)
	f := startProxy(t, []string{"allowed.test", "local.test"}, []string{"denied.test"}, []string{"127.0.0.3"}, defaultNames())
	pa := port(t, a)
	code, c := socksDial(t, f.p, 1, 3, "allowed.test", pa)
	if code != 0 {
		t.Fatalf("allowed.test: reply %d", code)
	}
	fmt.Fprintf(c, "GET /s HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	c.Close()
	if string(body) != "A GET /s body=0" {
		t.Errorf("through SOCKS: %q", body)
	}
	for _, tc := range []struct {
		cmd, atyp byte
		host      string
		port      int
		want      byte
	}{
		{1, 3, "denied.test", pa, 2},
		{1, 3, "other.test", pa, 2},
		{1, 3, "local.test", pa, 2},       // resolves to 127.0.0.1
		{1, 1, "127.0.0.1", pa, 2},        // an address: needs an address rule
		{1, 4, "::ffff:127.0.0.1", pa, 2}, // its mapped form too
		{1, 1, "93.184.215.14", pa, 2},    // a public address no rule names
		{1, 1, "127.0.0.3", port(t, lo3s), 0},
		{2, 3, "allowed.test", pa, 7}, // BIND
		{3, 3, "allowed.test", pa, 7}, // UDP ASSOCIATE
		{1, 3, "nosuch.test", pa, 2},
	} {
		code, c := socksDial(t, f.p, tc.cmd, tc.atyp, tc.host, tc.port)
		c.Close()
		if code != tc.want {
			t.Errorf("cmd %d %s:%d: reply %d, want %d", tc.cmd, tc.host, tc.port, code, tc.want)
		}
	}
	if err := f.p.Stop(); err != nil {
		t.Fatal(err)
	}
	recs := f.p.Records()
	if len(recs) != 11 {
		t.Fatalf("%d records: %v", len(recs), recs)
	}
	r0 := recs[0]
	if r0.Proto != ProtoSOCKS || r0.Host != "allowed.test" || !r0.Allowed() || r0.Rule != "allowed.test" || r0.Sent == 0 || r0.Received == 0 || r0.Addr.Addr() != pubA {
		t.Errorf("SOCKS record: %+v", r0)
	}
	if r := recs[1]; r.Verdict != hostrule.DeniedByRule || !strings.Contains(r.Err, "denied.test") {
		t.Errorf("denied record: %+v", r)
	}
	if r := recs[5]; r.Host != "127.0.0.1" || r.Verdict != hostrule.DeniedNoRule {
		t.Errorf("mapped address record: %+v", r)
	}
	if r := recs[7]; r.Host != "127.0.0.3" || !r.Allowed() || r.Rule != "127.0.0.3" {
		t.Errorf("allowed address record: %+v", r)
	}
	if r := recs[8]; r.Verdict != hostrule.DeniedInvalid {
		t.Errorf("BIND record: %+v", r)
	}
}

// TestStopLeaksNothing: Stop ends open tunnels and keep-alive clients and
// waits for every goroutine.
func TestStopLeaksNothing(t *testing.T) {
	a := upstream(t, lo2, "A", false)
	before := runtime.NumGoroutine()
	f := startProxy(t, []string{"allowed.test"}, nil, nil, defaultNames())
	c := proxyClient(f, nil)
	get(t, c, fmt.Sprintf("http://allowed.test:%d/", port(t, a)))
	// An open CONNECT tunnel and an open SOCKS session, left idle.
	tc, err := net.Dial("tcp", f.p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	io.WriteString(tc, withCred(f.p, fmt.Sprintf("CONNECT allowed.test:%d HTTP/1.1\r\nHost: x\r\n\r\n", port(t, a))))
	br := bufio.NewReader(tc)
	line, _ := br.ReadString('\n')
	if !strings.Contains(line, "200") {
		t.Fatalf("CONNECT: %q", line)
	}
	code, sc := socksDial(t, f.p, 1, 3, "allowed.test", port(t, a))
	defer sc.Close()
	if code != 0 {
		t.Fatalf("SOCKS %d", code)
	}
	// A client that connected and sent nothing.
	idle, err := net.Dial("tcp", f.p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	time.Sleep(50 * time.Millisecond)
	if runtime.NumGoroutine() <= before {
		t.Fatal("no goroutine while serving: the count says nothing")
	}
	done := make(chan error, 1)
	go func() { done <- f.p.Stop() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stop hangs with open connections")
	}
	c.CloseIdleConnections()
	for _, conn := range []net.Conn{tc, sc, idle} {
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Read(make([]byte, 1)); err == nil {
			t.Errorf("a connection stays open after Stop")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines after Stop, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	if _, err := net.DialTimeout("tcp", f.p.Addr().String(), time.Second); err == nil {
		t.Error("the listener accepts after Stop")
	}
	if err := f.p.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestIdleTimeout: a tunnel with no traffic either way is closed.
func TestIdleTimeout(t *testing.T) {
	a := upstream(t, lo2, "A", false)
	rules, _ := hostrule.NewRules([]string{"allowed.test"}, nil, nil)
	dl := &mapDialer{m: map[netip.Addr]netip.Addr{pubA: lo2}}
	p, err := Start(Config{Rules: rules, Resolver: newResolver(defaultNames()), Dialer: dl, IdleTimeout: 300 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	code, c := socksDial(t, p, 1, 3, "allowed.test", port(t, a))
	defer c.Close()
	if code != 0 {
		t.Fatal(code)
	}
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read on an idle tunnel: %v, want EOF", err)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
		t.Errorf("closed after %v, idle timeout 300ms", d)
	}
	p.Stop()
	if r := p.Records(); len(r) != 1 || !strings.Contains(r[0].Err, "idle") {
		t.Errorf("records: %v", r)
	}
}

func TestEnv(t *testing.T) {
	cred := Credential{User: "procage-1", Password: "0a1b"}
	env := Env(netip.MustParseAddrPort("127.0.0.1:3128"), cred)
	want := map[string]string{
		"HTTP_PROXY": "http://procage-1:0a1b@127.0.0.1:3128", "https_proxy": "http://procage-1:0a1b@127.0.0.1:3128",
		"ALL_PROXY": "socks5h://procage-1:0a1b@127.0.0.1:3128", "all_proxy": "socks5h://procage-1:0a1b@127.0.0.1:3128",
		"NO_PROXY": "", "no_proxy": "", "RSYNC_PROXY": "procage-1:0a1b@127.0.0.1:3128", "CLOUDSDK_PROXY_PORT": "3128",
		"CLOUDSDK_PROXY_USERNAME": "procage-1", "CLOUDSDK_PROXY_PASSWORD": "0a1b",
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s twice", k)
		}
		got[k] = v
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s=%q, want %q", k, g, v)
		}
	}
	if len(EnvNames()) != len(env) {
		t.Errorf("EnvNames: %v", EnvNames())
	}
	if e := Env(netip.MustParseAddrPort("[::1]:8080"), cred); e[0] != "HTTP_PROXY=http://procage-1:0a1b@[::1]:8080" {
		t.Errorf("IPv6: %s", e[0])
	}
}

// TestCredential: the proxy serves only clients with the run's credential
// (any local process can connect to 127.0.0.1:PORT); the others get 407
// (HTTP, CONNECT) or no acceptable method and a failed login (SOCKS5),
// and are recorded.
func TestCredential(t *testing.T) {
	a := upstream(t, lo2, "A", false)
	f := startProxy(t, []string{"allowed.test"}, nil, nil, defaultNames())
	pa := port(t, a)
	wrong := base64.StdEncoding.EncodeToString([]byte(f.p.Credential().User + ":x" + f.p.Credential().Password))
	for _, text := range []string{
		fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", pa),
		fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test\r\nProxy-Authorization: Basic %s\r\nConnection: close\r\n\r\n", pa, wrong),
		fmt.Sprintf("CONNECT allowed.test:%d HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", pa),
	} {
		c, err := net.Dial("tcp", f.p.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, text)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil || resp.StatusCode != http.StatusProxyAuthRequired || !strings.HasPrefix(resp.Header.Get("Proxy-Authenticate"), "Basic ") {
			t.Errorf("%.40q: %v %v, want 407 with a Basic challenge", text, resp, err)
		}
	}
	socks := func(text string, want []byte) {
		t.Helper()
		c, err := net.Dial("tcp", f.p.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, text)
		got, _ := io.ReadAll(c)
		if !bytes.Equal(got, want) {
			t.Errorf("SOCKS5 %q: answered % x, want % x", text, got, want)
		}
	}
	req := fmt.Sprintf("\x05\x01\x00\x03\x0callowed.test%c%c", byte(pa>>8), byte(pa))
	socks("\x05\x01\x00"+req, []byte{5, 0xff})
	socks(socksLogin(Credential{User: f.p.Credential().User, Password: "x"})+req, []byte{5, 2, 1, 1})
	_ = f.p.Stop()
	recs := f.p.Records()
	if len(recs) != 5 {
		t.Fatalf("%d records, want 5: %v", len(recs), recs)
	}
	for _, r := range recs {
		if r.Allowed() || !strings.Contains(r.Reason, "credential") || r.Addr.IsValid() {
			t.Errorf("record: %v", r)
		}
	}
}

// TestHostAddrs: a name resolving to one of this machine's addresses (a
// public one here, injected) is refused in each protocol, as is the
// address asked for directly, unless an address rule names it; with the
// machine's addresses unknown, every request is refused.
func TestHostAddrs(t *testing.T) {
	a := upstream(t, lo2, "A", false)
	pa := port(t, a)
	start := func(addrs []string, host func() ([]netip.Addr, error)) *fixture {
		rules, err := hostrule.NewRules([]string{"allowed.test"}, nil, addrs)
		if err != nil {
			t.Fatal(err)
		}
		f := &fixture{res: newResolver(defaultNames()), dl: &mapDialer{m: map[netip.Addr]netip.Addr{pubA: lo2}}}
		if f.p, err = Start(Config{Rules: rules, Resolver: f.res, Dialer: f.dl, HostAddrs: host}, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.p.Stop() })
		return f
	}
	own := func() ([]netip.Addr, error) { return []netip.Addr{pubA}, nil }
	requests := func(f *fixture) []string {
		var outs []string
		for _, host := range []string{"allowed.test", pubA.String()} {
			hp := hostPort(host, pa)
			outs = append(outs,
				rawRequest(t, f, "GET http://"+hp+"/ HTTP/1.1\r\nHost: "+hp+"\r\nConnection: close\r\n\r\n"),
				rawRequest(t, f, "CONNECT "+hp+" HTTP/1.1\r\nHost: "+hp+"\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
				rawRequest(t, f, socksText(host, pa)+"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
		}
		return outs
	}
	for _, c := range []struct {
		name    string
		addrs   []string
		host    func() ([]netip.Addr, error)
		allowed bool
		reason  string
	}{
		{"own, a network's rule", []string{"93.184.0.0/16"}, own, false, "this host's own address"},
		{"own, named", []string{pubA.String()}, own, true, ""},
		{"not own", []string{"93.184.0.0/16"}, func() ([]netip.Addr, error) { return []netip.Addr{pubB}, nil }, true, ""},
		{"unknown", []string{pubA.String()}, func() ([]netip.Addr, error) { return nil, errors.New("no netlink") }, false, "cannot read this host's own addresses"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := start(c.addrs, c.host)
			outs := requests(f)
			_ = f.p.Stop()
			recs := f.p.Records()
			if len(recs) != len(outs) {
				t.Fatalf("%d records for %d requests: %v", len(recs), len(outs), recs)
			}
			for i, out := range outs {
				if reached := strings.Contains(out, "A GET / body=0"); reached != c.allowed {
					t.Errorf("request %d reached the upstream: %v, want %v: %q", i, reached, c.allowed, out)
				}
				r := recs[i]
				if r.Allowed() != c.allowed || !c.allowed && (r.Verdict != hostrule.DeniedAddress || !strings.Contains(r.Reason, c.reason)) {
					t.Errorf("record %d: %v; want allowed %v, reason naming %q", i, r, c.allowed, c.reason)
				}
			}
			if !c.allowed && len(f.dl.all()) != 0 {
				t.Errorf("dialed %v", f.dl.all())
			}
		})
	}
}

// TestAddrCache: the machine's addresses are read again once older than
// the bound, a failed read is not kept, and concurrent callers share a
// read.
func TestAddrCache(t *testing.T) {
	var reads atomic.Int32
	fail := atomic.Bool{}
	c := &addrCache{maxAge: 50 * time.Millisecond, read: func() ([]netip.Addr, error) {
		reads.Add(1)
		if fail.Load() {
			return nil, errors.New("boom")
		}
		return []netip.Addr{netip.AddrFrom4([4]byte{192, 0, 2, byte(reads.Load())})}, nil
	}}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if a, err := c.get(); err != nil || len(a) != 1 {
				t.Errorf("get: %v, %v", a, err)
			}
		})
	}
	wg.Wait()
	if n := reads.Load(); n != 1 {
		t.Errorf("%d reads for 8 concurrent gets", n)
	}
	time.Sleep(60 * time.Millisecond)
	if a, _ := c.get(); reads.Load() != 2 || a[0].String() != "192.0.2.2" {
		t.Errorf("after the bound: %v, %d reads; want a new read", a, reads.Load())
	}
	time.Sleep(60 * time.Millisecond)
	fail.Store(true)
	if _, err := c.get(); err == nil {
		t.Error("a failed read gave no error")
	}
	fail.Store(false)
	if a, err := c.get(); err != nil || reads.Load() != 4 || a[0].String() != "192.0.2.4" {
		t.Errorf("after a failed read: %v, %v, %d reads", a, err, reads.Load())
	}
	// The machine's own addresses are read for real.
	if a, err := interfaceAddrs.get(); err != nil || len(a) == 0 {
		t.Errorf("this machine's addresses: %v, %v", a, err)
	}
}
