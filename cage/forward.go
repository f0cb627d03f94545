package cage

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
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
	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

// forwardDialTimeout bounds a dial of the host's port.
const forwardDialTimeout = 10 * time.Second

// startForward serves lns[i] by forwarding to 127.0.0.1:ports[i].
func startForward(lns []net.Listener, ports []uint16) *forwarder {
	f := &forwarder{lns: lns, conns: map[net.Conn]struct{}{}}
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
		if !f.track(c) {
			c.Close()
			return
		}
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			defer f.untrack(c)
			up, err := net.DialTimeout("tcp", to, forwardDialTimeout)
			if err != nil {
				return // the child sees its connection closed
			}
			if !f.track(up) {
				up.Close()
				return
			}
			defer f.untrack(up)
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

func (f *forwarder) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *forwarder) untrack(c net.Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
	c.Close()
}

// stop closes the listeners and every connection and waits for every
// goroutine.
func (f *forwarder) stop() {
	f.mu.Lock()
	f.closed = true
	conns := make([]net.Conn, 0, len(f.conns))
	for c := range f.conns {
		conns = append(conns, c)
	}
	f.mu.Unlock()
	for _, ln := range f.lns {
		ln.Close()
	}
	for _, c := range conns {
		c.Close()
	}
	f.wg.Wait()
}
