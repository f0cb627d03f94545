package cage

import (
	"fmt"
	"net"

	"github.com/procage-go/procage/internal/egress"
	"github.com/procage-go/procage/internal/egress/hostrule"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// NetRequest is one request of a run's egress proxy (a
// [profile.NetworkProxy] policy): the host and port asked for, the method
// (CONNECT for a tunnel or a SOCKS5 request), the verdict and the rule
// that decided it, the upstream address dialed, the bytes each way and what
// failed. [Cmd.NetLog] lists a run's requests.
type NetRequest = egress.Request

// NetDropped counts what a run's egress proxy did not record (requests
// past [NetMaxRecords]) or serve (connections past [NetMaxConns] open at
// once: closed unserved).
type NetDropped = egress.Dropped

// The bounds of a run's egress proxy: requests recorded, connections
// served at once.
const (
	NetMaxRecords = egress.MaxRecords
	NetMaxConns   = egress.MaxConns
)

// NetVerdict is a [NetRequest]'s decision.
type NetVerdict = hostrule.Verdict

// The verdicts of a [NetRequest].
const (
	NetAllowed       = hostrule.Allowed
	NetDeniedByRule  = hostrule.DeniedByRule
	NetDeniedNoRule  = hostrule.DeniedNoRule
	NetDeniedAddress = hostrule.DeniedAddress
	NetDeniedResolve = hostrule.DeniedResolve
	NetDeniedInvalid = hostrule.DeniedInvalid
)

// proxyNet overrides the proxy's resolver and dialer (tests: names mapped
// to this machine's loopback).
type proxyNet struct {
	resolver egress.Resolver
	dialer   egress.Dialer
}

// proxyConfig is the run's egress proxy configuration for a proxy-mode
// policy; false for another mode. One proxy per run, not per cage: its
// record is the run's, and it ends with the run.
func (c *Cage) proxyConfig() (egress.Config, bool, error) {
	if mode, _ := c.policy.Network(); mode != profile.NetworkProxy {
		return egress.Config{}, false, nil
	}
	rules, err := hostrule.NewRules(c.policy.AllowedHosts(), c.policy.DeniedHosts(), c.policy.AllowedAddresses())
	if err != nil {
		return egress.Config{}, false, fmt.Errorf("cage: %w", err) // profile.New checked them
	}
	// The credential is made here, before the proxy starts: at T1 the
	// child's environment names it before the child hands the listener
	// over.
	cred, err := egress.NewCredential()
	if err != nil {
		return egress.Config{}, false, fmt.Errorf("cage: %w", err)
	}
	cfg := egress.Config{Rules: rules, Credential: cred}
	if n := c.cfg.proxyNet; n != nil {
		cfg.Resolver, cfg.Dialer = n.resolver, n.dialer
	}
	return cfg, true, nil
}

// ownNetNS is the run's own network namespace of a Linux T1 plan, or nil.
func (c *Cage) ownNetNS() *linux.NetNamespace {
	if lp, ok := c.planned.(*linuxPlan); ok && lp.plan.Tier == linux.TierT1 {
		return lp.plan.NetNS
	}
	return nil
}

// serveNet serves the listeners a T1 child handed over from its own
// network namespace: the egress proxy on the one (proxy mode), or a
// forwarder to the host's 127.0.0.1 for each named port.
func (cmd *Cmd) serveNet(handoff func() ([]net.Listener, error), cfg egress.Config, proxy bool, nn *linux.NetNamespace) error {
	lns, err := handoff()
	if err != nil {
		return fmt.Errorf("cage: %w", err)
	}
	cmd.proxyMu.Lock()
	defer cmd.proxyMu.Unlock()
	if proxy {
		if len(lns) != 1 {
			for _, l := range lns {
				l.Close()
			}
			return fmt.Errorf("cage: BUG: %d proxy listeners", len(lns))
		}
		p, err := egress.Start(cfg, lns[0])
		if err != nil {
			lns[0].Close()
			return fmt.Errorf("cage: starting the egress proxy: %w", err)
		}
		cmd.proxy = p
		return nil
	}
	if nn == nil || len(lns) != len(nn.HostPorts) {
		for _, l := range lns {
			l.Close()
		}
		return fmt.Errorf("cage: BUG: %d listeners for the forwarded ports", len(lns))
	}
	cmd.fwd = startForward(lns, nn.HostPorts)
	return nil
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

// NetLogDropped returns what the run's egress proxy dropped from
// [Cmd.NetLog] (requests past the record's bound) and connections it closed
// unserved (more than its bound open at once): so far, or in the run once
// Wait has returned.
func (cmd *Cmd) NetLogDropped() NetDropped {
	cmd.proxyMu.Lock()
	defer cmd.proxyMu.Unlock()
	if cmd.proxy != nil {
		return cmd.proxy.Dropped()
	}
	return cmd.netDropped
}

// stopProxy ends the run's proxy and keeps its record, and ends the
// run's forwarders.
func (cmd *Cmd) stopProxy() {
	cmd.proxyMu.Lock()
	defer cmd.proxyMu.Unlock()
	if cmd.fwd != nil {
		cmd.fwd.stop()
		cmd.fwd = nil
	}
	if cmd.proxy == nil {
		return
	}
	_ = cmd.proxy.Stop()
	cmd.netLog = cmd.proxy.Records()
	cmd.netDropped = cmd.proxy.Dropped()
	cmd.proxy = nil
}
