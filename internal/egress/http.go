package egress

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/procage-go/procage/internal/egress/hostrule"
)

// serveHTTP answers one request on the proxy's HTTP side: CONNECT opens a
// tunnel, an absolute-form request is forwarded.
func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if pc, ok := r.Context().Value(peekedKey{}).(*peekedConn); ok {
		pc.handled.Add(1)
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "procage egress proxy: stopping", http.StatusServiceUnavailable)
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()
	if !p.cfg.Credential.proxyAuthorized(r) {
		p.unauthorized(w, r)
		return
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	p.forward(w, r)
}

// unauthorized records and answers a request without the run's
// credential: 407 and a Basic challenge (RFC 9110 15.5.8), which a client
// with the credential in its proxy URL answers.
func (p *Proxy) unauthorized(w http.ResponseWriter, r *http.Request) {
	proto, host, port := ProtoHTTP, r.URL.Hostname(), 80
	if r.Method == http.MethodConnect {
		proto = ProtoConnect
		h, pt, err := splitHostPort(r.Host, 0)
		if err == nil {
			host, port = h, pt
		} else {
			host, port = r.Host, 0
		}
	} else if n, err := strconv.Atoi(r.URL.Port()); err == nil {
		port = n
	}
	rec := p.begin(proto, r.Method, host, port)
	defer p.finish(rec)
	rec.Verdict, rec.Reason = hostrule.DeniedInvalid, authText
	w.Header().Set("Proxy-Authenticate", `Basic realm="procage egress proxy"`)
	w.Header().Set("X-Proxy-Error", string(hostrule.DeniedInvalid))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusProxyAuthRequired)
	_, _ = io.WriteString(w, "procage egress proxy: refused: "+authText+"\n")
	rec.Status = http.StatusProxyAuthRequired
}

// upgrades reports whether h asks to upgrade the connection (RFC 9110
// 7.8: the Upgrade option in Connection, or an Upgrade header).
func upgrades(h http.Header) bool {
	if h.Get("Upgrade") != "" {
		return true
	}
	for _, v := range h["Connection"] {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

// refuse records d and answers the refused request with 403 (or 400 for
// an invalid one) and the text naming the host and what would allow it.
func refuse(w http.ResponseWriter, rec *Request, d hostrule.Decision) {
	setDecision(rec, d)
	status := http.StatusForbidden
	if d.Verdict == hostrule.DeniedInvalid {
		status = http.StatusBadRequest
	}
	w.Header().Set("X-Proxy-Error", string(d.Verdict))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, denyText(rec.Host, rec.Port, d))
	rec.Status = status
}

func setDecision(rec *Request, d hostrule.Decision) {
	rec.Verdict, rec.Rule, rec.Reason = d.Verdict, d.Rule, d.Reason
}

// admit decides on host:port for an HTTP or CONNECT request and records
// the port, the name decided on and the decision; a request the policy
// does not allow is refused, and ok is false.
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request, rec *Request, host string, port int) (name string, d hostrule.Decision, ok bool) {
	rec.Port = port
	name, d = p.decide(r.Context(), host, port)
	rec.Host = name
	if d.Verdict != hostrule.Allowed {
		refuse(w, rec, d)
		return name, d, false
	}
	setDecision(rec, d)
	return name, d, true
}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	host, port := r.URL.Hostname(), 80
	rec := p.begin(ProtoHTTP, r.Method, host, 0)
	defer p.finish(rec)
	if !r.URL.IsAbs() || r.URL.Host == "" || r.URL.Scheme != "http" {
		rec.Port = port
		refuse(w, rec, hostrule.Decision{Verdict: hostrule.DeniedInvalid, Reason: "a proxy request names an http:// URL (absolute form, RFC 9112 3.2.2); https goes through CONNECT"})
		return
	}
	if ps := r.URL.Port(); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil {
			n = -1
		}
		port = n
	}
	if upgrades(r.Header) {
		// httputil.ReverseProxy would splice an upgraded connection (a
		// WebSocket) as a byte stream that neither the record's counts
		// nor the idle timeout see; CONNECT is the proxy's stream.
		rec.Port = port
		setDecision(rec, hostrule.Decision{Verdict: hostrule.DeniedInvalid, Reason: "a forwarded request cannot upgrade its connection (Connection: Upgrade, Upgrade: " + r.Header.Get("Upgrade") + "): open a tunnel with CONNECT " + hostPort(host, port) + " instead (a WebSocket client does when its proxy is set)"})
		w.Header().Set("X-Proxy-Error", string(hostrule.DeniedInvalid))
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "procage egress proxy: "+hostPort(rec.Host, port)+" refused: "+rec.Reason+"\n")
		rec.Status = http.StatusBadRequest
		return
	}
	name, d, ok := p.admit(w, r, rec, host, port)
	if !ok {
		return
	}
	authority := net.JoinHostPort(name, strconv.Itoa(port))
	ck := &checked{hostport: authority, addrs: d.Addrs, port: port}
	var gotAddr atomic.Pointer[netip.AddrPort]
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if dc, ok := info.Conn.(*dialedConn); ok {
			gotAddr.Store(&dc.addr)
		}
	}}
	ctx := httptrace.WithClientTrace(context.WithValue(r.Context(), checkedKey{}, ck), trace)
	body := &countReader{r: r.Body}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = body
	}
	cw := &countWriter{ResponseWriter: w}
	var rpErr error
	var head int64
	rp := &httputil.ReverseProxy{
		Transport: p.tr,
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Host = authority // the dialer's key: the checked host and port
			if r.URL.Port() == "" {
				pr.Out.Host = name
			}
			head = requestHead(pr.Out)
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			rpErr = err
			if errors.Is(err, context.Canceled) {
				return
			}
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "procage egress proxy: "+authority+": "+err.Error()+"\n")
		},
		ErrorLog: discardLog,
	}
	rp.ServeHTTP(cw, r.WithContext(ctx))
	if ap := gotAddr.Load(); ap != nil {
		rec.Addr = *ap
	}
	rec.Sent, rec.Received, rec.Status = body.n.Load(), cw.n, cw.status
	if rec.Addr.IsValid() {
		// The request line and headers went upstream too: a URL or a
		// header carries data as well as a body does.
		rec.Sent += head
	}
	if rpErr != nil {
		rec.Err = rpErr.Error()
	}
}

// connect opens a CONNECT tunnel (RFC 9110 9.3.6) to the checked address.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	rec := p.begin(ProtoConnect, http.MethodConnect, r.Host, 0)
	defer p.finish(rec)
	host, port, err := splitHostPort(r.Host, 0)
	if err != nil {
		refuse(w, rec, hostrule.Decision{Verdict: hostrule.DeniedInvalid, Reason: "CONNECT names host:port: " + err.Error()})
		return
	}
	name, d, ok := p.admit(w, r, rec, host, port)
	if !ok {
		return
	}
	up, ap, err := p.dial(r.Context(), d.Addrs, port)
	if err != nil {
		rec.Err, rec.Status = err.Error(), http.StatusBadGateway
		http.Error(w, "procage egress proxy: "+hostPort(name, port)+": "+err.Error(), http.StatusBadGateway)
		return
	}
	rec.Addr = ap
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		rec.Err, rec.Status = "connection cannot be hijacked", http.StatusInternalServerError
		http.Error(w, "procage egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, brw, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		rec.Err = err.Error()
		return
	}
	if pc, ok := client.(*peekedConn); ok {
		pc.tunnel.Store(true)
	}
	defer client.Close()
	defer up.Close()
	if !p.conns.Add(up) {
		rec.Err = "proxy stopping"
		return
	}
	defer p.conns.Remove(up)
	if !p.conns.Add(client) {
		rec.Err = "proxy stopping"
		return
	}
	defer p.conns.Remove(client)
	_ = client.SetDeadline(time.Time{})
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		rec.Err = err.Error()
		return
	}
	rec.Status = http.StatusOK
	up2, down, err := p.splice(client, up, brw.Reader)
	rec.Sent, rec.Received = up2, down
	if err != nil {
		rec.Err = err.Error()
	}
}

// requestHead is the size of r's request line and header block as an
// HTTP/1.1 client writes them to the origin (origin form), give or take
// the headers the transport adds (Content-Length, User-Agent if absent).
func requestHead(r *http.Request) int64 {
	n := len(r.Method) + 1 + len(r.URL.RequestURI()) + len(" HTTP/1.1\r\n") + len("Host: \r\n") + len(r.Host) + 2
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + 2 + len(v) + 2
		}
	}
	return int64(n)
}

// countReader counts a request body's bytes.
type countReader struct {
	r io.ReadCloser
	n atomic.Int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}
func (c *countReader) Close() error { return c.r.Close() }

// countWriter counts a response body's bytes and keeps its status.
type countWriter struct {
	http.ResponseWriter
	n      int64
	status int
}

func (c *countWriter) WriteHeader(code int) {
	if c.status == 0 || code >= 200 && c.status < 200 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach Flush.
func (c *countWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

var discardLog = log.New(io.Discard, "", 0)
