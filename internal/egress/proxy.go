package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/procage-go/procage/internal/conntrack"
	"github.com/procage-go/procage/internal/egress/hostrule"
)

// Resolver looks up a host's addresses; *net.Resolver is one. Tests inject
// a map.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer opens the upstream connection; *net.Dialer is one. The proxy
// passes it an address literal it checked, never a name.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Config configures a [Proxy].
type Config struct {
	// Rules decide the hosts (required).
	Rules *hostrule.Rules
	// Resolver resolves names; nil is net.DefaultResolver.
	Resolver Resolver
	// Dialer dials the checked addresses; nil is a net.Dialer.
	Dialer Dialer
	// IdleTimeout ends a connection (tunnel, keep-alive client or SOCKS
	// session) with no traffic for this long; 0 is two minutes.
	IdleTimeout time.Duration
	// Credential is what a client must present ([Credential]); zero is
	// a new random one ([NewCredential]). The proxy never serves a client
	// without it.
	Credential Credential
	// HostAddrs returns this machine's interface addresses, which the
	// proxy refuses to dial unless an address rule names them; nil reads
	// them (net.InterfaceAddrs, at most 100ms old: interfaces change).
	HostAddrs func() ([]netip.Addr, error)
	// HandshakeTimeout bounds a client's first request (HTTP header or
	// SOCKS negotiation), a name's resolution and the upstream dial;
	// 0 is 30 seconds.
	HandshakeTimeout time.Duration
}

// Proxy is one run's egress proxy: HTTP (absolute-form requests and
// CONNECT) and SOCKS5 on one listener. Start it with [Start], end it with
// [Proxy.Stop]; [Proxy.Records] then lists every request.
type Proxy struct {
	cfg     Config
	ln      net.Listener
	httpLn  *chanListener
	srv     *http.Server
	tr      *http.Transport
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	closed  bool // Stop has begun: no new handler joins wg
	conns   conntrack.Set
	records []Request
	seq     int
	active  int // connections being served
	dropped Dropped
	stopErr error
	stopped chan struct{}
	once    sync.Once
}

// Start serves the proxy on ln, or, with ln nil, on a new listener on
// 127.0.0.1 and a port the kernel picks. The proxy owns ln from now on:
// Stop closes it. A listener made elsewhere (one a child created in its own
// network namespace and passed over a Unix socket) serves the same way.
func Start(cfg Config, ln net.Listener) (*Proxy, error) {
	if cfg.Rules == nil {
		return nil, errors.New("egress: Config.Rules is nil")
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dialer == nil {
		cfg.Dialer = &net.Dialer{}
	}
	if cfg.HostAddrs == nil {
		cfg.HostAddrs = interfaceAddrs.get
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 2 * time.Minute
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 30 * time.Second
	}
	if cfg.Credential == (Credential{}) {
		var err error
		if cfg.Credential, err = NewCredential(); err != nil {
			return nil, err
		}
	}
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("egress: %w", err)
		}
	}
	p := &Proxy{cfg: cfg, ln: ln, stopped: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.httpLn = newChanListener(ln.Addr())
	p.tr = &http.Transport{
		DialContext:           p.dialChecked,
		Proxy:                 nil, // never a proxy of the caller's environment
		MaxIdleConns:          maxIdleUpstream,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       cfg.IdleTimeout,
		ResponseHeaderTimeout: 0,
		ForceAttemptHTTP2:     false,
	}
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.serveHTTP),
		ReadHeaderTimeout: cfg.HandshakeTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return p.ctx },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, peekedKey{}, c)
		},
		ErrorLog: discardLog,
	}
	p.wg.Add(2)
	go func() { defer p.wg.Done(); p.acceptLoop() }()
	go func() { defer p.wg.Done(); _ = p.srv.Serve(p.httpLn) }()
	return p, nil
}

// Addr returns the address the proxy listens on.
func (p *Proxy) Addr() netip.AddrPort {
	if ta, ok := p.ln.Addr().(*net.TCPAddr); ok {
		return ta.AddrPort()
	}
	ap, _ := netip.ParseAddrPort(p.ln.Addr().String())
	return ap
}

// Port returns the port the proxy listens on.
func (p *Proxy) Port() int { return int(p.Addr().Port()) }

// Env returns the proxy variables for a child that reaches the proxy at
// the address it listens on ([Env]).
func (p *Proxy) Env() []string { return Env(p.Addr(), p.cfg.Credential) }

// Credential returns the credential the proxy asks its clients for.
func (p *Proxy) Credential() Credential { return p.cfg.Credential }

// Stop closes the listener and every connection, waits for every
// goroutine the proxy started and returns the listener's close error.
// Calling it again returns the same.
func (p *Proxy) Stop() error {
	p.once.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.conns.Close()
		p.stopErr = p.ln.Close()
		if errors.Is(p.stopErr, net.ErrClosed) {
			p.stopErr = nil
		}
		p.cancel()
		p.httpLn.Close()
		_ = p.srv.Close()
		p.wg.Wait()
		p.tr.CloseIdleConnections()
		close(p.stopped)
	})
	return p.stopErr
}

// MaxConns bounds the connections one proxy serves at once: the proxy runs
// in the caller's process, and each connection costs it a descriptor and
// goroutines for up to HandshakeTimeout (a keep-alive client holds one for
// IdleTimeout per byte), so a child that opens thousands would exhaust the
// caller's descriptors. A connection past the bound is closed at once and
// counted ([Dropped]).
const MaxConns = 256

// maxIdleUpstream bounds the upstream connections the forwarding
// transport keeps idle for reuse, across every host:port: each is a
// descriptor for IdleTimeout, and a child asking for one new name after
// another (a wildcard rule, a host on every port) would otherwise leave
// one per name (TestRTEgressIdleUpstreamPool). Past it, the oldest closes.
const maxIdleUpstream = 64

// MaxRecords bounds a run's record: each request's record is kept for the
// run's life, and a child can make requests in a loop. Requests past the
// bound are served as any other but counted, not recorded ([Dropped]).
const MaxRecords = 10000

// Dropped counts what a proxy did not keep or serve.
type Dropped struct {
	// Records counts the requests not recorded: the record held
	// MaxRecords.
	Records int
	// Conns counts the connections closed unserved: MaxConns were open.
	Conns int
}

// Dropped returns what the proxy dropped so far; after Stop, in the run.
func (p *Proxy) Dropped() Dropped {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// Records returns every request so far, in the order they began; after
// Stop, every request of the run (at most MaxRecords: [Proxy.Dropped]
// counts the rest).
func (p *Proxy) Records() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := slices.Clone(p.records)
	slices.SortStableFunc(out, func(a, b Request) int { return a.seq - b.seq })
	return out
}

// track registers c to be closed by Stop and runs fn on a goroutine Stop
// waits for (the caller, the accept loop, is one too); it reports false
// (and closes c) once Stop has begun.
func (p *Proxy) track(c net.Conn, fn func()) bool {
	if !p.conns.Add(c) {
		_ = c.Close()
		return false
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer p.conns.Remove(c)
		fn()
	}()
	return true
}

// begin starts a record, numbered in the order requests began.
func (p *Proxy) begin(proto Proto, method, host string, port int) *Request {
	p.mu.Lock()
	p.seq++
	r := &Request{seq: p.seq, Start: time.Now(), Proto: proto, Method: method, Host: host, Port: port}
	p.mu.Unlock()
	return r
}

// finish stores a finished record, its client-chosen text made printable
// and clipped: a SOCKS5 name is any bytes, which `procage run --net-log`
// would print as lines of its own, and a request line may be as long as
// the header limit (1 MiB), kept as long as the run's record.
func (p *Proxy) finish(r *Request) {
	r.Duration = time.Since(r.Start)
	r.Method = clip(printable(r.Method), maxRecordMethod)
	r.Host = clip(printable(r.Host), maxRecordHost)
	r.Reason = clip(printable(r.Reason), maxRecordText)
	r.Err = clip(printable(r.Err), maxRecordText)
	p.mu.Lock()
	if len(p.records) < MaxRecords {
		p.records = append(p.records, *r)
	} else {
		p.dropped.Records++
	}
	p.mu.Unlock()
}

// The longest text a record keeps of a method, a host (a DNS name has at
// most 253 characters, RFC 1035 2.3.4) and a reason or error.
const (
	maxRecordMethod = 64
	maxRecordHost   = 255
	maxRecordText   = 1024
)

// printable escapes s's bytes outside printable ASCII as \xNN; a valid
// host, method or reason has none.
func printable(s string) string {
	i := strings.IndexFunc(s, func(c rune) bool { return c < 0x20 || c >= 0x7f })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for j := i; j < len(s); j++ {
		if c := s[j]; c < 0x20 || c >= 0x7f {
			fmt.Fprintf(&b, "\\x%02x", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// clip shortens s (printable ASCII) to at most limit bytes, saying how
// long it was.
func clip(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	mark := fmt.Sprintf("...(%d bytes)", len(s))
	return s[:max(limit-len(mark), 0)] + mark
}

func (p *Proxy) acceptLoop() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		if !p.enter() {
			_ = c.Close()
			continue
		}
		if !p.track(c, func() { defer p.leave(); p.sniff(c) }) {
			p.leave()
		}
	}
}

// enter counts a new connection in, or reports false (counted as dropped)
// when MaxConns are being served.
func (p *Proxy) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.active >= MaxConns {
		p.dropped.Conns++
		return false
	}
	p.active++
	return true
}

func (p *Proxy) leave() {
	p.mu.Lock()
	p.active--
	p.mu.Unlock()
}

// sniff tells SOCKS5 (first byte 5, RFC 1928 section 3) from HTTP on one
// listener: one port for the Seatbelt profile to allow and one listener
// for a child in its own network namespace to hand over.
func (p *Proxy) sniff(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(p.cfg.HandshakeTimeout))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return
	}
	if first[0] == socksVersion {
		p.serveSOCKS(c, br)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	pc := &peekedConn{Conn: c, r: br, done: make(chan struct{}), p: p}
	if !p.httpLn.push(pc) {
		return
	}
	// The http.Server owns the connection now; this goroutine waits until
	// the server closes it, so that Stop waits for it too.
	select {
	case <-pc.done:
	case <-p.ctx.Done():
	}
}

// peekedConn is a connection whose first bytes were read into r.
type peekedConn struct {
	net.Conn
	r         *bufio.Reader
	closeOnce sync.Once
	done      chan struct{}
	p         *Proxy
	// handled counts the requests the handler began on the connection,
	// answered the final (not 1xx) responses written on it: one more
	// answer than requests handled is the server's own refusal of a
	// request it could not parse (400, 431), which no handler sees.
	handled, answered atomic.Int64
	// tunnel is set once a CONNECT hijacked the connection: what is
	// written on it from then on is the upstream's.
	tunnel atomic.Bool
}

func (c *peekedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

func (c *peekedConn) Write(b []byte) (int, error) {
	if !c.tunnel.Load() && len(b) >= 12 && string(b[:7]) == "HTTP/1." && b[9] >= '2' && b[9] <= '5' {
		if c.answered.Add(1) > c.handled.Load() {
			c.p.httpMalformed(b)
		}
	}
	return c.Conn.Write(b)
}

type peekedKey struct{}

// httpMalformed records a request the HTTP server refused before any
// handler ran; resp is its answer ("HTTP/1.1 400 Bad Request\r\n...\r\n\r\n
// 400 Bad Request: malformed Host header").
func (p *Proxy) httpMalformed(resp []byte) {
	status, _ := strconv.Atoi(string(resp[9:12]))
	why := string(resp[9:])
	if _, body, ok := strings.Cut(why, "\r\n\r\n"); ok && body != "" {
		why = body
	}
	why, _, _ = strings.Cut(why, "\r\n")
	rec := p.begin(ProtoHTTP, "", "", 0)
	rec.Verdict, rec.Reason, rec.Status = hostrule.DeniedInvalid, "malformed HTTP request: "+strings.TrimSpace(why), status
	p.finish(rec)
}
func (c *peekedConn) Close() error {
	err := c.Conn.Close()
	c.closeOnce.Do(func() { close(c.done) })
	return err
}

// chanListener hands the sniffed HTTP connections to an http.Server.
type chanListener struct {
	addr   net.Addr
	ch     chan net.Conn
	done   chan struct{}
	closed sync.Once
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *chanListener) push(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.closed.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// decide applies the rules to host:port, resolving a name once; the
// decision's addresses are the only ones the proxy dials for it.
func (p *Proxy) decide(ctx context.Context, host string, port int) (string, hostrule.Decision) {
	if port < 1 || port > 65535 {
		return host, hostrule.Decision{Verdict: hostrule.DeniedInvalid, Reason: fmt.Sprintf("port %d is not 1..65535", port)}
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		a = a.Unmap()
		h, err := p.host()
		if err != nil {
			return a.String(), hostUnknown(err)
		}
		return a.String(), p.cfg.Rules.DecideAddr(a, port, h)
	}
	name, err := hostrule.NormalizeHost(host)
	if err != nil {
		return host, hostrule.Decision{Verdict: hostrule.DeniedInvalid, Reason: fmt.Sprintf("%q is not a host name: %v", host, err)}
	}
	d := p.cfg.Rules.DecideName(name, port)
	if d.Verdict != hostrule.Allowed {
		return name, d
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.HandshakeTimeout)
	defer cancel()
	// The absolute name: a relative one would go through resolv.conf's
	// search list first when it has fewer dots than ndots (resolv.conf(5);
	// Kubernetes pods have ndots:5), so --allow-host github.com could dial
	// github.com.corp.example. (Go's resolver, and glibc's, then skip
	// /etc/hosts: docs/policy.md says so.)
	addrs, err := p.cfg.Resolver.LookupNetIP(ctx, "ip", name+".")
	if err != nil || len(addrs) == 0 {
		if err == nil {
			err = errors.New("no address")
		}
		return name, hostrule.Decision{Verdict: hostrule.DeniedResolve, Rule: d.Rule, Reason: fmt.Sprintf("host %s does not resolve: %v", name, err)}
	}
	h, err := p.host()
	if err != nil {
		return name, hostUnknown(err)
	}
	return name, p.cfg.Rules.Filter(d, name, port, addrs, h)
}

// hostUnknown refuses a request when this machine's addresses cannot be
// read: any destination might be one of them.
func hostUnknown(err error) hostrule.Decision {
	return hostrule.Decision{Verdict: hostrule.DeniedAddress, Reason: "cannot read this host's own addresses, which the proxy refuses: " + err.Error()}
}

// dial connects to the first of the decision's addresses that answers.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, netip.AddrPort, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.HandshakeTimeout)
	defer cancel()
	var errs []error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, uint16(port))
		c, err := p.cfg.Dialer.DialContext(ctx, "tcp", ap.String())
		if err == nil {
			return c, ap, nil
		}
		errs = append(errs, err)
	}
	return nil, netip.AddrPort{}, errors.Join(errs...)
}

type checkedKey struct{}

// checked is what the HTTP transport may dial for one request.
type checked struct {
	hostport string
	addrs    []netip.Addr
	port     int
}

// dialChecked is the transport's dialer: it dials only the addresses the
// request's decision allowed, for the host:port it decided on.
func (p *Proxy) dialChecked(ctx context.Context, network, addr string) (net.Conn, error) {
	ck, ok := ctx.Value(checkedKey{}).(*checked)
	if !ok || ck.hostport != addr {
		return nil, fmt.Errorf("egress: dial of unchecked address %s", addr)
	}
	c, ap, err := p.dial(ctx, ck.addrs, ck.port)
	if err != nil {
		return nil, err
	}
	return &dialedConn{Conn: c, addr: ap}, nil
}

// dialedConn is an upstream connection of the HTTP transport with the
// checked address it was dialed at, for the record.
type dialedConn struct {
	net.Conn
	addr netip.AddrPort
}

// splitHostPort splits an authority, with def for a missing port.
func splitHostPort(hostport string, def int) (string, int, error) {
	host, ps, err := net.SplitHostPort(hostport)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) && strings.Contains(ae.Err, "missing port") && def != 0 {
			return strings.Trim(hostport, "[]"), def, nil
		}
		return "", 0, err
	}
	n, err := strconv.Atoi(ps)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("bad port %q", ps)
	}
	return host, n, nil
}

// splice copies both ways until either side ends or both stay idle for
// the idle timeout, and returns the bytes sent up and received.
func (p *Proxy) splice(client, upstream net.Conn, clientBuf io.Reader) (up, down int64, err error) {
	var last activity
	last.touch()
	end := func() {
		last.end()
		_ = client.SetReadDeadline(time.Now())
		_ = upstream.SetReadDeadline(time.Now())
	}
	type res struct {
		n   int64
		err error
	}
	upc, downc := make(chan res, 1), make(chan res, 1)
	go func() {
		n, err := p.copyIdle(upstream, client, clientBuf, &last)
		closeWrite(upstream)
		upc <- res{n, err}
	}()
	go func() {
		n, err := p.copyIdle(client, upstream, upstream, &last)
		closeWrite(client)
		downc <- res{n, err}
	}()
	var u, d res
	select {
	case u = <-upc:
		if u.err != nil {
			end() // a failed direction ends the tunnel
		}
		d = <-downc
	case d = <-downc:
		if d.err != nil {
			end()
		}
		u = <-upc
	}
	return u.n, d.n, errors.Join(u.err, d.err)
}

// activity is the time of a tunnel's last byte either way.
type activity struct {
	mu    sync.Mutex
	t     time.Time
	ended bool
}

func (a *activity) end() { a.mu.Lock(); a.ended = true; a.mu.Unlock() }

// idle reports whether the copy should end after a read timeout.
func (a *activity) idle(limit time.Duration) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ended || time.Since(a.t) >= limit
}

func (a *activity) touch() { a.mu.Lock(); a.t = time.Now(); a.mu.Unlock() }

type readDeadliner interface{ SetReadDeadline(time.Time) error }

// copyIdle copies src to dst, refreshing src's read deadline; a timeout
// ends the copy only when neither direction moved for the idle timeout.
func (p *Proxy) copyIdle(dst io.Writer, srcConn readDeadliner, src io.Reader, last *activity) (int64, error) {
	buf := make([]byte, 32*1024)
	var n int64
	for {
		_ = srcConn.SetReadDeadline(time.Now().Add(p.cfg.IdleTimeout))
		k, rerr := src.Read(buf)
		if k > 0 {
			last.touch()
			w, werr := dst.Write(buf[:k])
			n += int64(w)
			if werr != nil {
				return n, werr
			}
		}
		if rerr == nil {
			continue
		}
		if rerr == io.EOF {
			return n, nil
		}
		var ne net.Error
		if errors.As(rerr, &ne) && ne.Timeout() && p.ctx.Err() == nil {
			if !last.idle(p.cfg.IdleTimeout) {
				continue
			}
			last.mu.Lock()
			ended := last.ended
			last.mu.Unlock()
			if ended {
				return n, nil
			}
			return n, fmt.Errorf("idle for %v", p.cfg.IdleTimeout)
		}
		if errors.Is(rerr, net.ErrClosed) || p.ctx.Err() != nil {
			return n, nil
		}
		return n, rerr
	}
}

// closeWrite half-closes c where it can, so the peer sees EOF.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = c.Close()
}
