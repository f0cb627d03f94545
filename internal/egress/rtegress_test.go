package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// Red-team canaries for the egress proxy's second round (branch
// rt-egress2): what a caged child can still make the proxy do.

// TestRTEgressIdleUpstreamPool: the forwarding transport keeps each
// upstream connection it used idle for reuse, MaxIdleConnsPerHost per
// host:port but with no bound across them (http.Transport's MaxIdleConns,
// zero: no limit), each for IdleTimeout (two minutes). A child allowed a
// wildcard (or a host on every port) asks for one new name after another
// on one keep-alive connection, within MaxConns, and the caller's process
// holds one descriptor per name: MaxConns is no bound on what the proxy
// holds open.
func TestRTEgressIdleUpstreamPool(t *testing.T) {
	var open atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	ln, err := net.Listen("tcp", netip.AddrPortFrom(lo2, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	p := port(t, srv)

	const names = 3 * maxIdleUpstream
	m := map[string][]netip.Addr{}
	for i := range names {
		m[fmt.Sprintf("n%d.pool.test", i)] = []netip.Addr{pubA}
	}
	f := startProxy(t, []string{"*.pool.test"}, nil, nil, m)
	c, err := net.Dial("tcp", f.p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	for i := range names {
		hp := fmt.Sprintf("n%d.pool.test:%d", i, p)
		if _, err := io.WriteString(c, withCred(f.p, "GET http://"+hp+"/ HTTP/1.1\r\nHost: "+hp+"\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %s", i, resp.Status)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := open.Load(); n > maxIdleUpstream+1 {
		t.Errorf("after %d requests to %d names on one client connection, the proxy holds %d upstream connections open (bound %d)", names, names, n, maxIdleUpstream)
	}
}
