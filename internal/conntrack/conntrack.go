// Package conntrack tracks the open connections of a server that must
// close them all when it stops (the egress proxy, the T1 port forwarder):
// a connection still copying when the run ends would outlive it.
package conntrack

import (
	"net"
	"sync"
)

// Set is a server's open connections. The zero Set is empty and open.
type Set struct {
	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

// Add registers c, to be closed by Close; false (c not registered, not
// closed) once Close has begun.
func (s *Set) Add(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.conns == nil {
		s.conns = map[net.Conn]struct{}{}
	}
	s.conns[c] = struct{}{}
	return true
}

// Remove unregisters c and closes it.
func (s *Set) Remove(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
}

// Close refuses further connections and closes every one registered.
func (s *Set) Close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}
