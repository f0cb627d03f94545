package egress

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/procage-go/procage/internal/egress/hostrule"
)

// The tests reach upstream servers on this machine's loopback only
// (127.0.0.2, 127.0.0.3, ::1). Names resolve through mapResolver; the
// "public" addresses it returns are translated to a loopback server by
// mapDialer, which refuses every address it has no translation for, so a
// test can never leave the machine.
var (
	pubA  = netip.MustParseAddr("93.184.215.14")   // allowed.test -> 127.0.0.2
	pubB  = netip.MustParseAddr("151.101.0.223")   // other.test -> 127.0.0.3
	pub6  = netip.MustParseAddr("2606:4700::6810") // v6.test -> ::1
	lo2   = netip.MustParseAddr("127.0.0.2")
	lo3   = netip.MustParseAddr("127.0.0.3")
	lo6   = netip.MustParseAddr("::1")
	local = netip.MustParseAddr("127.0.0.1")
)

// mapResolver resolves names from a map and counts the lookups.
type mapResolver struct {
	mu    sync.Mutex
	m     map[string][][]netip.Addr // successive answers; the last repeats
	calls map[string]int
}

func newResolver(m map[string][]netip.Addr) *mapResolver {
	r := &mapResolver{m: map[string][][]netip.Addr{}, calls: map[string]int{}}
	for k, v := range m {
		r.m[k] = [][]netip.Addr{v}
	}
	return r
}

func (r *mapResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// The proxy asks for absolute names (TestRT23ResolveRelativeName);
	// the map's keys are written without the root's dot.
	host, ok := strings.CutSuffix(host, ".")
	if !ok {
		return nil, fmt.Errorf("mapResolver: %q is a relative name", host)
	}
	answers, ok := r.m[host]
	n := r.calls[host]
	r.calls[host]++
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return answers[min(n, len(answers)-1)], nil
}

func (r *mapResolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// mapDialer dials the loopback server that stands in for an address.
type mapDialer struct {
	mu     sync.Mutex
	m      map[netip.Addr]netip.Addr
	dialed []netip.AddrPort
}

func (d *mapDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil, fmt.Errorf("mapDialer: %q is not an address literal: %w", address, err)
	}
	d.mu.Lock()
	d.dialed = append(d.dialed, ap)
	to, ok := d.m[ap.Addr()]
	d.mu.Unlock()
	if !ok {
		if ap.Addr() == lo2 || ap.Addr() == lo3 || ap.Addr() == lo6 {
			to = ap.Addr()
		} else {
			return nil, fmt.Errorf("mapDialer: %s is off this machine: %w", ap, errConnRefused)
		}
	}
	var nd net.Dialer
	return nd.DialContext(ctx, network, netip.AddrPortFrom(to, ap.Port()).String())
}

func (d *mapDialer) all() []netip.AddrPort {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]netip.AddrPort(nil), d.dialed...)
}

// upstream is an HTTP server on a loopback address answering "NAME PATH"
// (or size bytes at /size/N), and echoing a POST body's length.
func upstream(t testing.TB, addr netip.Addr, name string, tlsOn bool) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", netip.AddrPortFrom(addr, 0).String())
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, ok := strings.CutPrefix(r.URL.Path, "/size/"); ok {
			var size int
			fmt.Sscan(n, &size)
			w.Header().Set("Content-Length", fmt.Sprint(size))
			_, _ = w.Write(make([]byte, size))
			return
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s body=%d", name, r.Method, r.URL.Path, len(body))
	}))
	s.Listener.Close()
	s.Listener = ln
	if tlsOn {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	return s
}

func port(t testing.TB, s *httptest.Server) int {
	t.Helper()
	ap, err := netip.ParseAddrPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return int(ap.Port())
}

// fixture is a proxy over the test resolver and dialer.
type fixture struct {
	p   *Proxy
	res *mapResolver
	dl  *mapDialer
}

func startProxy(t testing.TB, allow, deny, addrs []string, names map[string][]netip.Addr) *fixture {
	t.Helper()
	rules, err := hostrule.NewRules(allow, deny, addrs)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{res: newResolver(names), dl: &mapDialer{m: map[netip.Addr]netip.Addr{pubA: lo2, pubB: lo3, pub6: lo6}}}
	f.p, err = Start(Config{Rules: rules, Resolver: f.res, Dialer: f.dl}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.p.Stop() })
	return f
}

// defaultNames maps the tests' names.
func defaultNames() map[string][]netip.Addr {
	return map[string][]netip.Addr{
		"allowed.test":     {pubA},
		"www.allowed.test": {pubA},
		"other.test":       {pubB},
		"denied.test":      {pubA},
		"v6.test":          {pub6},
		"local.test":       {local},
		"lo3.test":         {lo3},
		"meta.test":        {netip.MustParseAddr("169.254.169.254")},
		"mapped.test":      {netip.MustParseAddr("::ffff:127.0.0.1")},
		"ula.test":         {netip.MustParseAddr("fd00::1")},
		"mixed.test":       {local, pubA},
		"example.com":      {pubA}, // the httptest certificate's name
	}
}

// proxyClient is a Go client that uses the proxy for every URL.
func proxyClient(f *fixture, roots *tls.Config) *http.Client {
	u := &url.URL{Scheme: "http", User: url.UserPassword(f.p.Credential().User, f.p.Credential().Password), Host: f.p.Addr().String()}
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: roots}
	return &http.Client{Transport: tr}
}

// socksLogin is a SOCKS5 greeting offering username/password and the
// RFC 1929 login with cred.
func socksLogin(cred Credential) string {
	return "\x05\x01\x02\x01" + string(rune(len(cred.User))) + cred.User + string(rune(len(cred.Password))) + cred.Password
}

// withCred adds the run's credential to a raw request: a SOCKS5 "no
// authentication" greeting becomes socksLogin (the reply then has the two
// bytes of the login's answer more); an HTTP request gets a
// Proxy-Authorization header after its request line.
func withCred(p *Proxy, text string) string {
	cred := p.Credential()
	if rest, ok := strings.CutPrefix(text, "\x05\x01\x00"); ok {
		return socksLogin(cred) + rest
	}
	if len(text) > 0 && text[0] == 5 {
		return text
	}
	line, rest, ok := strings.Cut(text, "\r\n")
	if !ok {
		return text
	}
	auth := base64.StdEncoding.EncodeToString([]byte(cred.User + ":" + cred.Password))
	return line + "\r\nProxy-Authorization: Basic " + auth + "\r\n" + rest
}

// proxyURL is the proxy's URL with its credential (scheme http or socks5h).
func proxyURL(p *Proxy, scheme string) string {
	return (&url.URL{Scheme: scheme, User: url.UserPassword(p.Credential().User, p.Credential().Password), Host: p.Addr().String()}).String()
}
