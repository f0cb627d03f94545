//go:build linux || darwin

package cage_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
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
	if a, ok := r[host]; ok {
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
	aProxy := strings.TrimSpace(line) // http://127.0.0.1:PORT
	aAddr := strings.TrimPrefix(aProxy, "http://")
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
