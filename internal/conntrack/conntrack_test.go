package conntrack

import (
	"errors"
	"io"
	"net"
	"testing"
)

// TestSet: Close closes what is registered and refuses what comes after;
// Remove closes and forgets.
func TestSet(t *testing.T) {
	var s Set
	a1, b1 := net.Pipe()
	a2, b2 := net.Pipe()
	defer b1.Close()
	defer b2.Close()
	if !s.Add(a1) || !s.Add(a2) {
		t.Fatal("Add refused on an open set")
	}
	s.Remove(a2)
	if _, err := a2.Write([]byte{1}); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("after Remove, write: %v", err)
	}
	s.Close()
	if _, err := a1.Write([]byte{1}); err == nil {
		t.Error("after Close, a registered connection still writes")
	}
	a3, b3 := net.Pipe()
	defer b3.Close()
	defer a3.Close()
	if s.Add(a3) {
		t.Error("Add accepted after Close")
	}
	if len(s.conns) != 1 {
		t.Errorf("%d connections kept after Remove of one of two", len(s.conns))
	}
}
