package cage

import "github.com/procage-go/procage/internal/egress"

// WithProxyNet gives the run's egress proxy a resolver and dialer (test
// names mapped to this machine's loopback).
func WithProxyNet(res egress.Resolver, d egress.Dialer) Option {
	return optionFunc(func(cfg *config) error { cfg.proxyNet = &proxyNet{resolver: res, dialer: d}; return nil })
}

// SpawnCode compiles what one spawn of a macOS-backend cage applies, with
// the run's proxy port (0 for a run without a proxy).
func (c *Cage) SpawnCode(target, marker, temp string, proxyPort int) ([]byte, error) {
	return c.planned.(*seatbeltPlan).code(target, marker, temp, proxyPort)
}

// WithProxyPort makes the run's proxy listen on port (at T2 on the host's
// 127.0.0.1, at T1 on the run's own).
func WithProxyPort(port int) Option {
	return optionFunc(func(cfg *config) error { cfg.proxyPort = port; return nil })
}
