package cage

import (
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestRTEgressForwardFlood: a T1 loopback run's forwarder (--port N)
// accepts every connection the child opens on its 127.0.0.1:N and dials
// the host's port for each, without a bound: each costs the caller two
// descriptors and three goroutines for as long as the host's service
// keeps it open, so a forking child exhausts the caller's descriptors (its
// other runs, its own files), which the egress proxy bounds (MaxConns).
// Here the listener stands for the one the child hands over.
func TestRTEgressForwardFlood(t *testing.T) {
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	var accepted atomic.Int64
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := host.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			held = append(held, c) // a service that keeps its clients
		}
	}()
	child, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	f := startForward([]net.Listener{child}, []uint16{uint16(host.Addr().(*net.TCPAddr).Port)})
	const n = 1000
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", child.Addr().String())
		if err != nil {
			t.Logf("dial %d: %v", len(conns), err)
			break
		}
		conns = append(conns, c)
	}
	time.Sleep(500 * time.Millisecond)
	extra := runtime.NumGoroutine() - before
	got := accepted.Load()
	for _, c := range conns {
		c.Close()
	}
	f.stop()
	host.Close()
	<-done
	for _, c := range held {
		c.Close()
	}
	t.Logf("%d child connections: the host's port accepted %d, %d goroutines more in the caller", len(conns), got, extra)
	if got > forwardMaxConns {
		t.Errorf("the forwarder dialed the host's port %d times for %d connections of one child (bound %d)", got, len(conns), forwardMaxConns)
	}
}
