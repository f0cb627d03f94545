package cage

import (
	"fmt"

	"github.com/procage-go/procage/internal/egress"
	"github.com/procage-go/procage/profile"
)

// NetRequest is one request of a run's egress proxy (a
// [profile.NetworkProxy] policy): the host and port asked for, the method
// (CONNECT for a tunnel or a SOCKS5 request), the verdict and the rule
// that decided it, the upstream address dialed, the bytes each way and what
// failed. [Cmd.NetLog] lists a run's requests.
type NetRequest = egress.Request

// NetVerdict is a [NetRequest]'s decision.
type NetVerdict = egress.Verdict

// The verdicts of a [NetRequest].
const (
	NetAllowed       = egress.Allowed
	NetDeniedByRule  = egress.DeniedByRule
	NetDeniedNoRule  = egress.DeniedNoRule
	NetDeniedAddress = egress.DeniedAddress
	NetDeniedResolve = egress.DeniedResolve
	NetDeniedInvalid = egress.DeniedInvalid
)

// proxyNet overrides the proxy's resolver and dialer (tests: names mapped
// to this machine's loopback).
type proxyNet struct {
	resolver egress.Resolver
	dialer   egress.Dialer
}

// startProxy starts the run's egress proxy on 127.0.0.1 for a proxy-mode
// policy; nil for another mode. One proxy per run, not per cage: its
// record is the run's, and it ends with the run.
func (c *Cage) startProxy() (*egress.Proxy, error) {
	if mode, _ := c.policy.Network(); mode != profile.NetworkProxy {
		return nil, nil
	}
	rules, err := egress.NewRules(c.policy.AllowedHosts(), c.policy.DeniedHosts(), c.policy.AllowedAddresses())
	if err != nil {
		return nil, fmt.Errorf("cage: %w", err) // profile.New checked them
	}
	cfg := egress.Config{Rules: rules}
	if n := c.cfg.proxyNet; n != nil {
		cfg.Resolver, cfg.Dialer = n.resolver, n.dialer
	}
	p, err := egress.Start(cfg, nil)
	if err != nil {
		return nil, fmt.Errorf("cage: starting the egress proxy: %w", err)
	}
	return p, nil
}

// NetLog returns the requests of the run's egress proxy (a proxy-mode
// policy), in the order they began: every request once Wait has returned,
// those so far before. Nil for another network mode.
func (cmd *Cmd) NetLog() []NetRequest {
	cmd.proxyMu.Lock()
	defer cmd.proxyMu.Unlock()
	if cmd.proxy != nil {
		return cmd.proxy.Records()
	}
	return cmd.netLog
}

// stopProxy ends the run's proxy and keeps its record.
func (cmd *Cmd) stopProxy() {
	cmd.proxyMu.Lock()
	defer cmd.proxyMu.Unlock()
	if cmd.proxy == nil {
		return
	}
	_ = cmd.proxy.Stop()
	cmd.netLog = cmd.proxy.Records()
	cmd.proxy = nil
}
