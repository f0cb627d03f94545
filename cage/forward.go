package cage

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/procage-go/procage/internal/conntrack"
	"github.com/procage-go/procage/internal/egress"
)

// forwarder serves a Linux T1 loopback run's named host ports: each
// listener is one the child made on 127.0.0.1:PORT in its own network
// namespace and handed over; each connection accepted on it is forwarded
// to the host's 127.0.0.1:PORT, dialed from the caller's namespace. It
// ends with the run (Wait): listeners closed, every connection closed,
// every goroutine returned.
type forwarder struct {
	lns    []net.Listener
	wg     sync.WaitGroup
	conns  conntrack.Set
	active atomic.Int64 // connections being served, all ports
}

// forwardDialTimeout bounds a dial of the host's port.
const forwardDialTimeout = 10 * time.Second

// forwardMaxConns bounds the connections one run's forwarder serves at
// once, as the egress proxy's (egress.MaxConns): each costs the caller two
// descriptors for as long as the host's service keeps it, and a forking
// child opens thousands (TestRTEgressForwardFlood). A connection past it
// is closed at once.
const forwardMaxConns = egress.MaxConns

// startForward serves lns[i] by forwarding to 127.0.0.1:ports[i].
func startForward(lns []net.Listener, ports []uint16) *forwarder {
	f := &forwarder{lns: lns}
	for i, ln := range lns {
		to := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(ports[i])))
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			f.serve(ln, to)
		}()
	}
	return f
}

func (f *forwarder) serve(ln net.Listener, to string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			time.Sleep(10 * time.Millisecond) // EMFILE and the like: do not spin
			continue
		}
		if f.active.Add(1) > forwardMaxConns {
			f.active.Add(-1)
			c.Close()
			continue
		}
		if !f.conns.Add(c) {
			f.active.Add(-1)
			c.Close()
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer f.active.Add(-1)
			defer f.conns.Remove(c)
			up, err := net.DialTimeout("tcp", to, forwardDialTimeout)
			if err != nil {
				return // the child sees its connection closed
			}
			if !f.conns.Add(up) {
				up.Close()
				return
			}
			defer f.conns.Remove(up)
			done := make(chan struct{})
			go func() {
				defer close(done)
				io.Copy(up, c)
				closeWrite(up)
			}()
			io.Copy(c, up)
			closeWrite(c)
			<-done
		}()
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}

// stop closes the listeners and every connection and waits for every
// goroutine.
func (f *forwarder) stop() {
	f.conns.Close()
	for _, ln := range f.lns {
		ln.Close()
	}
	f.wg.Wait()
}
