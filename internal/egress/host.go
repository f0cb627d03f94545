package egress

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/procage-go/procage/internal/egress/hostrule"
)

// hostAddrsMaxAge bounds how old a proxy's view of this machine's
// interface addresses may be. Reading them is a netlink dump (Linux) or a
// routing sysctl (macOS): ~35µs with a few interfaces, ~0.5ms with 200,
// each request the rules allow would pay it. An address added to the
// machine is refused at most this long after it appears; one removed
// stays refused as long (fail closed).
const hostAddrsMaxAge = 100 * time.Millisecond

// interfaceAddrs is this machine's interface addresses, read at most
// hostAddrsMaxAge ago, shared by every proxy in the process (they dial
// from the same machine). Concurrent callers wait for one read.
var interfaceAddrs = &addrCache{read: readInterfaceAddrs, maxAge: hostAddrsMaxAge}

type addrCache struct {
	read   func() ([]netip.Addr, error)
	maxAge time.Duration
	mu     sync.Mutex
	at     time.Time
	addrs  []netip.Addr
}

// get returns the addresses; a failed read is not kept, so the next
// request reads again.
func (c *addrCache) get() ([]netip.Addr, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && time.Since(c.at) < c.maxAge {
		return c.addrs, nil
	}
	addrs, err := c.read()
	if err != nil {
		return nil, err
	}
	c.addrs, c.at = addrs, time.Now()
	return addrs, nil
}

func readInterfaceAddrs() ([]netip.Addr, error) {
	ias, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(ias))
	for _, ia := range ias {
		var ip net.IP
		switch v := ia.(type) {
		case *net.IPNet:
			ip = v.IP
		case *net.IPAddr:
			ip = v.IP
		}
		if a, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, a.Unmap())
		}
	}
	return out, nil
}

// host returns what the rules need to know of this machine: its
// addresses, and (Linux) the routes that deliver others here.
func (p *Proxy) host() (hostrule.Host, error) {
	addrs, err := p.cfg.HostAddrs()
	if err != nil {
		return hostrule.Host{}, err
	}
	return hostrule.NewHost(addrs).WithRoutes(routesHere), nil
}
