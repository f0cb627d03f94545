package egress

import (
	"bufio"
	"context"
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
	"github.com/procage-go/procage/internal/testenv"
)

// Red-team canaries for issue 23 (the egress proxy). Each names what a
// caged child can do that the proxy's contract says it cannot.

// rawRequest sends text on a new connection to the proxy and returns what
// came back until the proxy closed it (or 5 seconds passed).
func rawRequest(t *testing.T, f *fixture, text string) string {
	t.Helper()
	c, err := net.Dial("tcp", f.p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, withCred(f.p, text)); err != nil {
		t.Fatal(err)
	}
	// Half-close so the proxy sees the end of a truncated request, but
	// not where the proxy closes: a half-closed client cancels a
	// forwarded request.
	if tc, ok := c.(*net.TCPConn); ok && !strings.Contains(text, "Connection: close") {
		_ = tc.CloseWrite()
	}
	b, _ := io.ReadAll(c)
	return string(b)
}

// TestRT23RecordHugeHost: the record keeps the host a refused request
// names, as sent, twice (Host, and quoted in Reason). An absolute-form URL
// or a CONNECT authority may be as long as the server's header limit
// (http.DefaultMaxHeaderBytes, 1 MiB), so each refused request costs the
// caller's process megabytes it keeps until the run's record is dropped:
// a child loops and the caller runs out of memory.
func TestRT23RecordHugeHost(t *testing.T) {
	f := startProxy(t, []string{"allowed.test"}, nil, nil, defaultNames())
	huge := strings.Repeat("a", 300<<10) + ".test"
	rawRequest(t, f, "GET http://"+huge+"/ HTTP/1.1\r\nHost: x\r\n\r\n")
	rawRequest(t, f, "CONNECT "+huge+":443 HTTP/1.1\r\nHost: x\r\n\r\n")
	// A method is a token of any length (RFC 9110 9.1).
	rawRequest(t, f, strings.Repeat("M", 300<<10)+" http://denied.test/ HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = f.p.Stop()
	recs := f.p.Records()
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3: %v", len(recs), recs)
	}
	for _, r := range recs {
		if r.Allowed() {
			t.Errorf("allowed: %v", r)
		}
		if n := len(r.Method) + len(r.Host) + len(r.Reason) + len(r.Err) + len(r.Rule); n > 4096 {
			t.Errorf("%s record keeps %d bytes of the client's text (Method %d, Host %d, Reason %d): a refused request's record should be bounded", r.Proto, n, len(r.Method), len(r.Host), len(r.Reason))
		}
	}
}

// TestRT23RecordMalformed: "every request (...) allowed/denied" is in the
// record (issue 23, part 4), but requests the proxy refuses before its
// handlers run leave none: a SOCKS5 greeting without "no authentication",
// a truncated SOCKS5 request, an HTTP request the server rejects (a
// malformed Host header; a header over the limit).
func TestRT23RecordMalformed(t *testing.T) {
	f := startProxy(t, []string{"allowed.test"}, nil, nil, defaultNames())
	cases := []struct{ name, text string }{
		{"socks5 greeting offering username/password, then no login", "\x05\x01\x02"},
		{"socks5 greeting cut short", "\x05\x03\x02"},
		{"socks5 request cut after the header", "\x05\x01\x00\x05\x01\x00\x03"},
		{"http request with a malformed Host header", "GET http://allowed.test/ HTTP/1.1\r\nHost: a b\r\nHost: c\r\n\r\n"},
		{"http request line that is not HTTP", "GET http://denied.test/\r\n\r\n"},
	}
	for _, c := range cases {
		out := rawRequest(t, f, c.text)
		t.Logf("%s: answered %q", c.name, firstLine(out))
	}
	_ = f.p.Stop()
	recs := f.p.Records()
	if len(recs) != len(cases) {
		t.Errorf("%d records for %d refused requests: %v", len(recs), len(cases), recs)
	}
	for _, r := range recs {
		if r.Verdict != hostrule.DeniedInvalid || !strings.Contains(r.Reason, "malformed") || (r.Proto == ProtoHTTP && r.Status != http.StatusBadRequest) {
			t.Errorf("record: %v (status %d)", r, r.Status)
		}
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// TestRT23UpgradeBytes: an absolute-form request with Connection: Upgrade
// that the upstream answers 101 became a two-way byte stream
// (httputil.ReverseProxy splices it), whose bytes the record did not
// count: the record said a few bytes where megabytes left. The proxy
// refuses the upgrade with a 4xx naming CONNECT, recorded, and the
// upstream never sees it.
func TestRT23UpgradeBytes(t *testing.T) {
	ln, err := net.Listen("tcp", lo2.String()+":0")
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Upgrade") != "rt23" {
			http.Error(w, "no upgrade", 400)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: rt23\r\n\r\n")
		_, _ = io.Copy(c, brw) // echo
	})}
	go srv.Serve(ln)
	defer srv.Close()
	up := ln.Addr().(*net.TCPAddr).Port
	f := startProxy(t, []string{"allowed.test"}, nil, nil, defaultNames())
	c, err := net.Dial("tcp", f.p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, withCred(f.p, fmt.Sprintf("GET http://allowed.test:%d/up HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: rt23\r\n\r\n", up)))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 4 || !strings.Contains(string(body), "CONNECT allowed.test:") {
		t.Errorf("a forwarded Connection: Upgrade got %d %q; want a 4xx naming CONNECT", resp.StatusCode, body)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the upstream saw %d upgrade requests; an upgraded stream escapes the record's counts", n)
	}
	_ = f.p.Stop()
	recs := find(f.p.Records(), "allowed.test")
	if len(recs) != 1 || recs[0].Allowed() || recs[0].Status != resp.StatusCode || !strings.Contains(recs[0].Reason, "CONNECT") {
		t.Errorf("records: %v", f.p.Records())
	}
}

// TestRT23UpgradeIdle: an upgraded stream had none of the proxy's idle
// timeout (Config.IdleTimeout: "ends a connection (tunnel, keep-alive
// client or SOCKS session) with no traffic for this long"): a CONNECT
// tunnel idle that long is closed, an upgraded one was not. The upgrade
// is refused, and its connection closed.
func TestRT23UpgradeIdle(t *testing.T) {
	ln, err := net.Listen("tcp", lo2.String()+":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: rt23\r\n\r\n")
		_, _ = io.Copy(io.Discard, c)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	up := ln.Addr().(*net.TCPAddr).Port
	rules, err := hostrule.NewRules([]string{"allowed.test"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dl := &mapDialer{m: map[netip.Addr]netip.Addr{pubA: lo2}}
	p, err := Start(Config{Rules: rules, Resolver: newResolver(map[string][]netip.Addr{"allowed.test": {pubA}}), Dialer: dl, IdleTimeout: 300 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	c, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, withCred(p, fmt.Sprintf("GET http://allowed.test:%d/up HTTP/1.1\r\nHost: allowed.test\r\nConnection: Upgrade\r\nUpgrade: rt23\r\n\r\n", up)))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode/100 != 4 {
		t.Fatalf("upgrade: %v %v, want a 4xx", resp, err)
	}
	// Refused, the connection ends: nothing is left open to idle.
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, _ = io.Copy(io.Discard, resp.Body)
	_, err = br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Errorf("the connection of a refused upgrade stays open 3s (IdleTimeout 300ms)")
	}
}

// TestRT23RecordHeaderBytes: Sent counts a forwarded request's body only,
// Received a response's body only: a request carrying half a megabyte in
// its URL and headers to an allowed host is recorded as "sent 0", so the
// record understates what left (issue 23, part 4: "bytes each way").
func TestRT23RecordHeaderBytes(t *testing.T) {
	a := upstream(t, lo2, "A", false)
	f := startProxy(t, []string{"allowed.test"}, nil, nil, defaultNames())
	const n = 512 << 10
	payload := strings.Repeat("x", n)
	out := rawRequest(t, f, fmt.Sprintf("GET http://allowed.test:%d/%s HTTP/1.1\r\nHost: allowed.test\r\nX-Data: %s\r\nConnection: close\r\n\r\n", port(t, a), payload[:n/2], payload[:n/2]))
	if !strings.Contains(out, "A GET") {
		t.Fatalf("upstream not reached: %.300q", out)
	}
	_ = f.p.Stop()
	recs := find(f.p.Records(), "allowed.test")
	if len(recs) != 1 {
		t.Fatalf("records: %v", f.p.Records())
	}
	if recs[0].Sent < n {
		t.Errorf("%d bytes of URL and headers went upstream; the record says sent %d", n, recs[0].Sent)
	}
}

// TestRT23HostTricks (holds today, kept as a regression): spellings of a
// loopback address and host-matching tricks, as an absolute-form URL, a
// CONNECT authority and a SOCKS5 name, none of which reaches 127.0.0.3
// (no address rule) or anything but the allowed name's address.
func TestRT23HostTricks(t *testing.T) {
	up := upstream(t, lo3, "LO3", false)
	p := port(t, up)
	names := defaultNames()
	names["evil.test"] = []netip.Addr{lo3}
	names["allowed.test.evil.test"] = []netip.Addr{lo3}
	f := startProxy(t, []string{"allowed.test", "*.allowed.test", "evil.test:1"}, nil, nil, names)
	hosts := []string{
		"127.0.0.3", "127.0.0.3.", "127.3", "0x7f000003", "2130706435", "017700000003", "0x7f.0.0.3",
		"[::ffff:127.0.0.3]", "[::ffff:7f00:3]", "[::127.0.0.3]", "[64:ff9b::7f00:3]", "[2002:7f00:3::]",
		"[::ffff:0:7f00:3]", "[fe80::1%25lo]", "0.0.0.0", "[::]", "localhost", "lo3.test", "LO3.TEST.",
		"evil.test", "allowed.test.evil.test", "allowed.test%2eevil.test", "allowed.test@evil.test",
		"xn--allowed-test.evil.test", "evil.test\x00.allowed.test", "*.allowed.test",
	}
	for _, h := range hosts {
		hp := fmt.Sprintf("%s:%d", h, p)
		rawRequest(t, f, "GET http://"+hp+"/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
		rawRequest(t, f, "CONNECT "+hp+" HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n")
		// A forwarded request to an allowed name, then one to h on the
		// same connection (pipelined).
		rawRequest(t, f, "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\nGET http://"+hp+"/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
		name := strings.Trim(h, "[]")
		if len(name) < 256 {
			rawRequest(t, f, "\x05\x01\x00\x05\x01\x00\x03"+string(rune(len(name)))+name+string([]byte{byte(p >> 8), byte(p)}))
		}
	}
	for _, ap := range f.dl.all() {
		if ap.Addr() != pubA {
			t.Errorf("dialed %s", ap)
		}
	}
	for _, r := range f.p.Records() {
		if r.Allowed() && r.Host != "allowed.test" {
			t.Errorf("allowed: %v", r)
		}
	}
}

// blockDialer blocks every dial until its context ends.
type blockDialer struct{}

func (blockDialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestRT23StopWhileBlocked (holds today, a regression): a run's Wait stops
// the proxy; a child cannot make that hang with requests in every
// blocking state: a forwarded request whose upstream never answers, a
// CONNECT and a SOCKS5 request whose dial never completes, a header sent
// one byte at a time, a SOCKS5 greeting cut short, an upgraded stream.
func TestRT23StopWhileBlocked(t *testing.T) {
	before := runtime.NumGoroutine()
	silent, err := net.Listen("tcp", lo2.String()+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accept, read nothing, answer nothing
		}
	}()
	sp := silent.Addr().(*net.TCPAddr).Port
	rules, err := hostrule.NewRules([]string{"allowed.test", "slow.test"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dl := &mapDialer{m: map[netip.Addr]netip.Addr{pubA: lo2}}
	names := map[string][]netip.Addr{"allowed.test": {pubA}, "slow.test": {pubB}}
	var d Dialer = dialerFunc(func(ctx context.Context, n, a string) (net.Conn, error) {
		if ap, _ := netip.ParseAddrPort(a); ap.Addr() == pubB {
			return blockDialer{}.DialContext(ctx, n, a)
		}
		return dl.DialContext(ctx, n, a)
	})
	p, err := Start(Config{Rules: rules, Resolver: newResolver(names), Dialer: d}, nil)
	if err != nil {
		t.Fatal(err)
	}
	send := func(text string) net.Conn {
		c, err := net.Dial("tcp", p.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_, _ = io.WriteString(c, text)
		return c
	}
	send(fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", sp))
	send("CONNECT slow.test:443 HTTP/1.1\r\nHost: slow.test:443\r\n\r\n")
	send("\x05\x01\x00\x05\x01\x00\x03\x09slow.test\x01\xbb")
	send("\x05\x02\x00")
	slow := send("G")
	go func() {
		for _, b := range []byte("ET http://allowed.test/ HTTP/1.1\r\n") {
			time.Sleep(50 * time.Millisecond)
			if _, err := slow.Write([]byte{b}); err != nil {
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- p.Stop() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("Stop hangs:\n%s", buf[:runtime.Stack(buf, true)])
	}
	t.Logf("Stop took %v", time.Since(start))
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+1 { // +1: the silent listener's
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Stop, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	for _, r := range p.Records() {
		t.Logf("record: %v", r)
	}
}

type dialerFunc func(ctx context.Context, network, address string) (net.Conn, error)

func (f dialerFunc) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return f(ctx, network, address)
}

// TestRT23ConnectionFlood: the proxy runs in the caller's process and
// accepts every connection a child opens, without a limit: each costs the
// caller a descriptor and goroutines for as long as HandshakeTimeout (30s
// by default; a keep-alive client resets it with a byte a minute, the
// IdleTimeout). A forking child opens thousands and exhausts the caller's
// descriptors (its other runs, its own files). 1024 stands for any bound.
func TestRT23ConnectionFlood(t *testing.T) {
	f := startProxy(t, []string{"allowed.test"}, nil, nil, defaultNames())
	const n = 2000
	before := runtime.NumGoroutine()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range n {
		c, err := net.Dial("tcp", f.p.Addr().String())
		if err != nil {
			t.Logf("dial %d: %v", len(conns), err)
			break
		}
		conns = append(conns, c)
	}
	time.Sleep(300 * time.Millisecond)
	// Each accepted connection runs at least one goroutine until its
	// handshake times out.
	held := runtime.NumGoroutine() - before
	t.Logf("%d connections open, %d goroutines more in the caller", len(conns), held)
	if held > 1024 {
		t.Errorf("the proxy holds %d goroutines (a descriptor each) for %d idle connections of one child: no bound", held, len(conns))
	}
	if d := f.p.Dropped(); len(conns) > MaxConns+10 && d.Conns == 0 {
		t.Errorf("%d connections, %d closed unserved: the bound is not counted", len(conns), d.Conns)
	}
}

// TestRecordBound: a run's record keeps MaxRecords requests and counts the
// rest.
func TestRecordBound(t *testing.T) {
	f := startProxy(t, []string{"allowed.test"}, nil, nil, defaultNames())
	for range MaxRecords + 7 {
		f.p.finish(f.p.begin(ProtoHTTP, "GET", "denied.test", 80))
	}
	if n, d := len(f.p.Records()), f.p.Dropped(); n != MaxRecords || d.Records != 7 {
		t.Errorf("%d records, %d dropped; want %d and 7", n, d.Records, MaxRecords)
	}
}

// nameRecorder records the names the proxy asks it for.
type nameRecorder struct {
	mu    sync.Mutex
	asked []string
	res   *mapResolver
}

func (r *nameRecorder) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	r.asked = append(r.asked, host)
	r.mu.Unlock()
	return r.res.LookupNetIP(ctx, network, host)
}

// TestRT23ResolveRelativeName: the proxy resolves an allowed name as a
// relative one ("allowed.test", not "allowed.test."), so the caller's
// resolver applies resolv.conf's search list first whenever the name has
// fewer dots than ndots (resolv.conf(5); Kubernetes pods have ndots:5):
// --allow-host github.com may then dial github.com.corp.example, whatever
// that search domain (or its wildcard record) answers.
func TestRT23ResolveRelativeName(t *testing.T) {
	a := upstream(t, lo2, "A", false)
	rules, err := hostrule.NewRules([]string{"allowed.test"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &nameRecorder{res: newResolver(defaultNames())}
	p, err := Start(Config{Rules: rules, Resolver: rec, Dialer: &mapDialer{m: map[netip.Addr]netip.Addr{pubA: lo2}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	f := &fixture{p: p}
	rawRequest(t, f, fmt.Sprintf("GET http://allowed.test:%d/ HTTP/1.1\r\nHost: allowed.test\r\nConnection: close\r\n\r\n", port(t, a)))
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.asked) == 0 {
		t.Fatal("no lookup")
	}
	for _, h := range rec.asked {
		if !strings.HasSuffix(h, ".") {
			t.Errorf("the proxy resolved %q, a relative name the search list extends; want %q", h, h+".")
		}
	}
}

// TestRT23RecordControlChars: a SOCKS5 name is any bytes, and the record
// kept a refused one as sent, in Host and in Err; `procage run --net-log`
// prints each record as a line on the caller's terminal, so a child forged
// lines ("allowed CONNECT github.com:443") and sent terminal escapes.
func TestRT23RecordControlChars(t *testing.T) {
	f := startProxy(t, []string{"allowed.test"}, nil, nil, defaultNames())
	name := "x\nprocage run: net: allowed CONNECT github.com:443 by github.com\x1b]0;owned\x07"
	rawRequest(t, f, "\x05\x01\x00\x05\x01\x00\x03"+string([]byte{byte(len(name))})+name+"\x01\xbb")
	_ = f.p.Stop()
	recs := f.p.Records()
	if len(recs) != 1 {
		t.Fatalf("records: %v", recs)
	}
	r := recs[0]
	for field, s := range map[string]string{"Host": r.Host, "Reason": r.Reason, "Err": r.Err, "String()": r.String()} {
		if strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
			t.Errorf("record %s keeps control characters: %q", field, s)
		}
	}
}

// broadRule is an address rule for p's network that does not name p's
// address itself (at most /24, or /64 for IPv6): a rule written for the
// network's other hosts.
func broadRule(p netip.Prefix) string {
	bits := min(p.Bits(), 24)
	if p.Addr().Is6() {
		bits = min(p.Bits(), 64)
	}
	return netip.PrefixFrom(p.Addr(), bits).Masked().String()
}

// socksText is a SOCKS5 CONNECT to host (a name, or an address literal
// sent as one) and port, after the "no authentication" greeting withCred
// turns into the run's login.
func socksText(host string, port int) string {
	req := []byte{5, 1, 0, 5, 1, 0}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Is4() {
			req = append(req, 1)
		} else {
			req = append(req, 4)
		}
		req = append(req, a.AsSlice()...)
	} else {
		req = append(req, 3, byte(len(host)))
		req = append(req, host...)
	}
	return string(append(req, byte(port>>8), byte(port)))
}

// TestRT23HostOwnAddress: the proxy refuses a destination that is
// loopback, private or the like unless an address rule allows it, but the
// host's own interface addresses are none of those (a public one, or one
// inside a network an address rule allows): a name resolving to one (any
// name a wildcard or broad host rule allows, or whose DNS a child's server
// answers), or an address literal a network's rule allows, reaches a
// service the host binds on 0.0.0.0 or [::], which the network modes keep
// out of reach unless named. So do 0.0.0.0 and ::, which connect(2) takes
// for this host. Real sockets: the proxy's own dialer, a listener on every
// address of this machine.
func TestRT23HostOwnAddress(t *testing.T) {
	hosts := testenv.HostAddrs(t)
	port, accepted := testenv.HostService(t, "host service")

	type tcase struct {
		name  string
		addrs []string // the proxy's address rules
		names map[string][]netip.Addr
		hosts []string // what the requests ask for
	}
	var cases []tcase
	for _, h := range hosts {
		a := h.Addr()
		c := tcase{
			name:  a.String(),
			addrs: []string{broadRule(h)},
			names: map[string][]netip.Addr{"own.test": {a}},
			hosts: []string{"own.test", a.String()},
		}
		if a.Is4() {
			m := netip.AddrFrom16(a.As16())
			c.names["mapped.own.test"] = []netip.Addr{m}
			c.hosts = append(c.hosts, "mapped.own.test", m.String())
		}
		cases = append(cases, c)
	}
	cases = append(cases, tcase{
		name:  "unspecified",
		addrs: []string{"0.0.0.0/0", "::/0"},
		names: map[string][]netip.Addr{"own.test": {netip.IPv4Unspecified()}, "v6.own.test": {netip.IPv6Unspecified()}},
		hosts: []string{"own.test", "v6.own.test", "0.0.0.0", "::", "::ffff:0.0.0.0"},
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rules, err := hostrule.NewRules([]string{"own.test", "*.own.test"}, nil, c.addrs)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Start(Config{Rules: rules, Resolver: newResolver(c.names)}, nil) // the proxy's own dialer
			if err != nil {
				t.Fatal(err)
			}
			defer p.Stop()
			f := &fixture{p: p}
			before := accepted.Load()
			for _, host := range c.hosts {
				hp := hostPort(host, port)
				tunnelled := "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
				for proto, text := range map[string]string{
					"http":    "GET http://" + hp + "/ HTTP/1.1\r\nHost: " + hp + "\r\nConnection: close\r\n\r\n",
					"connect": "CONNECT " + hp + " HTTP/1.1\r\nHost: " + hp + "\r\n\r\n" + tunnelled,
					"socks5":  socksText(host, port) + tunnelled,
				} {
					if out := rawRequest(t, f, text); strings.Contains(out, "host service") {
						t.Errorf("%s %s (rules %v): reached the host's own service through the proxy", proto, hp, c.addrs)
					}
				}
			}
			if n := accepted.Load() - before; n != 0 {
				t.Errorf("the host's listener accepted %d connections from the proxy", n)
			}
			_ = p.Stop()
			for _, r := range p.Records() {
				if r.Verdict != hostrule.DeniedAddress || !strings.Contains(r.Reason, "this host") {
					t.Errorf("record: %v; want %s naming this host", r, hostrule.DeniedAddress)
				}
			}
		})
	}
}

// TestTunnelledHTTPNoMalformedRecord: the bytes a CONNECT tunnel carries
// back are the upstream's, not the proxy's HTTP server's; an upstream's
// HTTP response there is no refusal of a malformed request.
func TestTunnelledHTTPNoMalformedRecord(t *testing.T) {
	a := upstream(t, lo2, "A", false)
	f := startProxy(t, []string{"allowed.test"}, nil, nil, defaultNames())
	hp := fmt.Sprintf("allowed.test:%d", port(t, a))
	out := rawRequest(t, f, "CONNECT "+hp+" HTTP/1.1\r\nHost: "+hp+"\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if !strings.Contains(out, "A GET / body=0") {
		t.Fatalf("through the tunnel: %q", out)
	}
	_ = f.p.Stop()
	if recs := f.p.Records(); len(recs) != 1 || !recs[0].Allowed() {
		t.Errorf("records: %v; want the one CONNECT", recs)
	}
}
