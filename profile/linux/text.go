package linux

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/procage-go/procage/internal/plantext"
	"github.com/procage-go/procage/profile"
)

// String renders the plan for people: the Landlock ruleset (each path with
// its rights and layer), the network rules and scopes, the seccomp rules,
// the minimum ABI, and the accepted and refused gaps. A path, or a gap's
// detail, that is not plain printable text (a line break, a control or
// escape character, a space in a path) is written as a Go string literal
// (strconv.Quote), so each rule is one line no path can forge another
// beside: strconv.Unquote gives the path back.
func (pl *Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Linux plan: Landlock ABI %d planned, at least %d needed; tier %s (%s)\n", pl.ABI, pl.MinABI, pl.Tier, pl.Tier.what())
	for _, n := range pl.needs {
		fmt.Fprintf(&b, "needs ABI %d: %s\n", n.abi, n.what)
	}
	fmt.Fprintf(&b, "landlock handled fs: %s\n", pl.HandledFS)
	fmt.Fprintf(&b, "landlock handled net: %s\n", pl.HandledNet)
	fmt.Fprintf(&b, "landlock scopes: %s\n", pl.Scopes)
	for _, r := range pl.Rules {
		fmt.Fprintf(&b, "path %-8s %s: %s\n", plantext.Word(string(r.Layer)), plantext.Word(r.Path), r.Access)
	}
	for _, r := range pl.NetRules {
		fmt.Fprintf(&b, "tcp port %d: %s\n", r.Port, r.Access)
	}
	for _, m := range pl.Mounts {
		fmt.Fprintf(&b, "mount %-9s %s: %s\n", m.Kind, plantext.Word(m.Path), m.Why)
	}
	if pl.NewNames {
		fmt.Fprintf(&b, "new names: a spawn with a writable tree runs the new-names supervisor: it performs %s itself and refuses %s (not in the run's private /tmp, /dev/shm and TMPDIR)\n", newNameList(), newNamesText())
	}
	fmt.Fprintf(&b, "network: %s\n", pl.Network)
	if pl.Tier == TierT1 {
		fmt.Fprintf(&b, "network namespace: %s\n", pl.NetNS)
	}
	for _, r := range pl.Seccomp {
		fmt.Fprintf(&b, "seccomp %s  # %s\n", r, r.Why)
	}
	fmt.Fprintf(&b, "seccomp: other architectures and x32 numbers kill the process; numbers above the reviewed table (amd64 %d, arm64 %d; %s) answer ENOSYS; every other call is allowed\n",
		ArchAMD64.ceiling, ArchARM64.ceiling, sysTableSource)
	for _, d := range pl.Denied {
		fmt.Fprintf(&b, "hard-deny %s\n", d)
	}
	for _, g := range pl.Accepted {
		fmt.Fprintf(&b, "ACCEPTED GAP (not enforced) %s: %s\n", plantext.Word(string(g.Gap)), plantext.Text(g.Detail))
	}
	for _, g := range pl.Refused {
		fmt.Fprintf(&b, "REFUSED GAP (not accepted) %s: %s\n", plantext.Word(string(g.Gap)), plantext.Text(g.Detail))
	}
	return b.String()
}

// planJSON is the JSON shape: rights as lists of names.
type planJSON struct {
	Tier       string         `json:"tier"`
	Mounts     []mountJSON    `json:"mounts"`
	ABI        int            `json:"abi"`
	MinABI     int            `json:"min_abi"`
	Needs      []string       `json:"min_abi_for"`
	HandledFS  []string       `json:"handled_fs"`
	HandledNet []string       `json:"handled_net"`
	Scopes     []string       `json:"scopes"`
	Rules      []ruleJSON     `json:"rules"`
	NetRules   []netRuleJSON  `json:"net_rules"`
	Network    string         `json:"network"`
	NetNS      *netNSJSON     `json:"network_namespace,omitempty"`
	NewNames   bool           `json:"new_names_supervised"`
	Forking    bool           `json:"forking"`
	Seccomp    []seccompJSON  `json:"seccomp"`
	Accepted   []gapPartJSON  `json:"accepted_gaps"`
	Refused    []gapPartJSON  `json:"refused_gaps,omitempty"`
	Denied     []denialJSON   `json:"hard_denied"`
	Arches     map[string]int `json:"seccomp_program_length"`
	Ceilings   map[string]int `json:"seccomp_enosys_above"`
}

type netNSJSON struct {
	Loopback  bool     `json:"loopback"`
	HostPorts []uint16 `json:"host_ports"`
	Proxy     bool     `json:"proxy"`
}

type mountJSON struct {
	Kind   MountKind `json:"kind"`
	Path   string    `json:"path"`
	Why    string    `json:"why"`
	Prefix bool      `json:"prefix,omitempty"`
}

type ruleJSON struct {
	Path   string   `json:"path"`
	Access []string `json:"access"`
	Layer  Layer    `json:"layer"`
	Why    string   `json:"why,omitempty"`
}

type netRuleJSON struct {
	Port   uint16   `json:"port"`
	Access []string `json:"access"`
}

type seccompJSON struct {
	Syscall string `json:"syscall"`
	If      string `json:"if,omitempty"`
	Errno   string `json:"errno"`
	Why     string `json:"why"`
}

type gapPartJSON struct {
	Gap       profile.Gap   `json:"gap"`
	Class     profile.Class `json:"class,omitempty"`
	Path      string        `json:"path,omitempty"`
	Protected []string      `json:"protected,omitempty"`
	Detail    string        `json:"detail"`
}

type denialJSON struct {
	Class     profile.Class `json:"class"`
	Protected string        `json:"protected"`
	Path      string        `json:"path"`
	Layer     Layer         `json:"layer"`
	Access    []string      `json:"access"`
}

func names(s fmt.Stringer) []string {
	v := s.String()
	if v == "none" {
		return []string{}
	}
	return strings.Split(v, "|")
}

// MarshalJSON writes the plan for tools (procage plan --json).
func (pl *Plan) MarshalJSON() ([]byte, error) {
	j := planJSON{
		Tier: pl.Tier.String(), Mounts: []mountJSON{},
		ABI: pl.ABI, MinABI: pl.MinABI,
		HandledFS: names(pl.HandledFS), HandledNet: names(pl.HandledNet), Scopes: names(pl.Scopes),
		Rules: []ruleJSON{}, NetRules: []netRuleJSON{}, Seccomp: []seccompJSON{}, Accepted: []gapPartJSON{}, Denied: []denialJSON{},
		Network: pl.Network.String(), NewNames: pl.NewNames, Forking: pl.Forking, Arches: map[string]int{}, Ceilings: map[string]int{}, Needs: []string{},
	}
	for _, m := range pl.Mounts {
		j.Mounts = append(j.Mounts, mountJSON(m))
	}
	if n := pl.NetNS; n != nil {
		j.NetNS = &netNSJSON{Loopback: n.Loopback, HostPorts: append([]uint16{}, n.HostPorts...), Proxy: n.Proxy}
	}
	for _, n := range pl.needs {
		j.Needs = append(j.Needs, fmt.Sprintf("ABI %d: %s", n.abi, n.what))
	}
	for _, r := range pl.Rules {
		j.Rules = append(j.Rules, ruleJSON{Path: r.Path, Access: names(r.Access), Layer: r.Layer, Why: r.Why})
	}
	for _, r := range pl.NetRules {
		j.NetRules = append(j.NetRules, netRuleJSON{Port: r.Port, Access: names(r.Access)})
	}
	for _, r := range pl.Seccomp {
		var cs []string
		for _, c := range r.Conds {
			cs = append(cs, c.String())
		}
		j.Seccomp = append(j.Seccomp, seccompJSON{Syscall: r.Syscall, If: strings.Join(cs, " && "), Errno: r.Errno.String(), Why: r.Why})
	}
	for _, g := range pl.Accepted {
		j.Accepted = append(j.Accepted, gapPartJSON(g))
	}
	for _, g := range pl.Refused {
		j.Refused = append(j.Refused, gapPartJSON(g))
	}
	for _, d := range pl.Denied {
		j.Denied = append(j.Denied, denialJSON{Class: d.Class, Protected: d.Protected, Path: d.Path, Layer: d.Layer, Access: names(d.Access)})
	}
	for _, a := range []*Arch{ArchAMD64, ArchARM64} {
		prog, err := Filter(a, pl.Seccomp)
		if err != nil {
			return nil, err
		}
		j.Arches[a.Name] = len(prog)
		j.Ceilings[a.Name] = int(a.ceiling)
	}
	return json.Marshal(j)
}
