package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// JSONVersion is the version of the policy's JSON form.
const JSONVersion = 1

// jsonPolicy is the versioned JSON form. Field order is the output order.
type jsonPolicy struct {
	Version     int          `json:"version"`
	Base        string       `json:"base"`
	FS          []jsonFSRule `json:"fs,omitempty"`
	Network     *jsonNetwork `json:"network,omitempty"`
	UnixSockets []string     `json:"unix_sockets,omitempty"`
	MachLookup  []string     `json:"mach_lookup,omitempty"`
	Fork        bool         `json:"fork,omitempty"`
	ExecOnly    bool         `json:"exec_target_only,omitempty"`
	Waive       []string     `json:"waive,omitempty"`
	AcceptBroad []string     `json:"accept_broad,omitempty"`
	Seatbelt    []string     `json:"seatbelt,omitempty"`
}

type jsonFSRule struct {
	Access  []string `json:"access"`
	Literal string   `json:"literal,omitempty"`
	Subpath string   `json:"subpath,omitempty"`
}

type jsonNetwork struct {
	Mode      string `json:"mode"`
	Ports     []int  `json:"ports,omitempty"`
	AnyPort   bool   `json:"any_port,omitempty"`
	ListenAny bool   `json:"listen_any,omitempty"`
}

// MarshalJSON writes the versioned JSON form ({"version":1, ...}).
func (p Policy) MarshalJSON() ([]byte, error) {
	if !p.validated {
		return nil, errors.New("profile: cannot marshal a zero Policy; build policies with profile.New")
	}
	j := jsonPolicy{Version: JSONVersion, Base: p.base.String(), UnixSockets: p.sockets, MachLookup: p.mach, Fork: p.fork, ExecOnly: p.execOnly, Seatbelt: p.seatSrc}
	for _, r := range p.fs {
		jr := jsonFSRule{}
		for _, a := range []Access{AccessRead, AccessWrite, AccessExec} {
			if r.Access&a != 0 {
				jr.Access = append(jr.Access, a.String())
			}
		}
		if r.Target == Subpath {
			jr.Subpath = r.Path
		} else {
			jr.Literal = r.Path
		}
		j.FS = append(j.FS, jr)
	}
	if p.network != NetworkOff {
		j.Network = &jsonNetwork{Mode: p.network.String(), Ports: p.ports, ListenAny: p.listenAny}
		if len(p.ports) == 1 && p.ports[0] == AnyPort {
			j.Network.Ports, j.Network.AnyPort = nil, true
		}
	}
	for _, c := range p.waived {
		j.Waive = append(j.Waive, string(c))
	}
	for _, b := range p.broad {
		j.AcceptBroad = append(j.AcceptBroad, string(b))
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the versioned JSON form. Unknown fields and bad
// values are errors naming the field.
func (p *Policy) UnmarshalJSON(data []byte) error {
	q, err := ParseJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// ParseJSON reads a policy in its versioned JSON form.
func ParseJSON(r io.Reader) (Policy, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var j jsonPolicy
	if err := dec.Decode(&j); err != nil {
		return Policy{}, jsonError(err)
	}
	if dec.More() {
		return Policy{}, &Error{Field: "json", Err: errors.New("trailing data after the policy object")}
	}
	if j.Version != JSONVersion {
		return Policy{}, &Error{Field: "version", Value: fmt.Sprint(j.Version), Err: fmt.Errorf("unsupported policy version (want %d)", JSONVersion)}
	}
	if j.Base == "" {
		return Policy{}, &Error{Field: "base", Err: errors.New("missing (want \"v1\")")}
	}
	base, err := parseBase(j.Base)
	if err != nil {
		return Policy{}, &Error{Field: "base", Value: j.Base, Err: err}
	}
	var opts []Option
	for i, r := range j.FS {
		field := fmt.Sprintf("fs[%d]", i)
		var access Access
		if len(r.Access) == 0 {
			return Policy{}, &Error{Field: field + ".access", Err: errors.New("missing (want a list of read, write, exec)")}
		}
		for _, a := range r.Access {
			switch a {
			case "read":
				access |= AccessRead
			case "write":
				access |= AccessWrite
			case "exec":
				access |= AccessExec
			default:
				return Policy{}, &Error{Field: field + ".access", Value: a, Err: errors.New("unknown access (want read, write or exec)")}
			}
		}
		switch {
		case r.Literal != "" && r.Subpath != "":
			return Policy{}, &Error{Field: field, Err: errors.New("set either literal or subpath, not both")}
		case r.Literal != "":
			opts = append(opts, renamed(field+".literal", FS(access, Literal, r.Literal)))
		case r.Subpath != "":
			opts = append(opts, renamed(field+".subpath", FS(access, Subpath, r.Subpath)))
		default:
			return Policy{}, &Error{Field: field, Err: errors.New("missing literal or subpath")}
		}
	}
	if j.Network != nil {
		mode, err := parseNetworkMode(j.Network.Mode)
		if err != nil {
			return Policy{}, &Error{Field: "network.mode", Value: j.Network.Mode, Err: err}
		}
		ports := j.Network.Ports
		if j.Network.AnyPort {
			if len(ports) > 0 {
				return Policy{}, &Error{Field: "network.any_port", Err: errors.New("any_port and ports exclude each other")}
			}
			ports = []int{AnyPort}
		}
		opts = append(opts, Network(mode, ports...))
		if j.Network.ListenAny {
			opts = append(opts, ListenAnyInterface())
		}
	}
	for i, s := range j.UnixSockets {
		opts = append(opts, renamed(fmt.Sprintf("unix_sockets[%d]", i), UnixSocket(s)))
	}
	for i, m := range j.MachLookup {
		opts = append(opts, renamed(fmt.Sprintf("mach_lookup[%d]", i), MachLookup(m)))
	}
	if j.Fork {
		opts = append(opts, Fork())
	}
	if j.ExecOnly {
		opts = append(opts, ExecTargetOnly())
	}
	for i, w := range j.Waive {
		c, err := parseClass(w)
		if err != nil {
			return Policy{}, &Error{Field: fmt.Sprintf("waive[%d]", i), Value: w, Err: err}
		}
		opts = append(opts, Waive(c))
	}
	for i, b := range j.AcceptBroad {
		opts = append(opts, renamed(fmt.Sprintf("accept_broad[%d]", i), AcceptBroad(Broad(b))))
	}
	for i, s := range j.Seatbelt {
		opts = append(opts, renamed(fmt.Sprintf("seatbelt[%d]", i), Seatbelt(s)))
	}
	return New(base, opts...)
}

// renamed makes an option's error name the JSON field it came from.
func renamed(field string, o Option) Option {
	return Wrap(o, func(err error) error {
		var pe *Error
		if errors.As(err, &pe) {
			return &Error{Field: field, Value: pe.Value, Err: pe.Err}
		}
		return err
	})
}

// jsonError names the field behind an encoding/json error.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &Error{Field: te.Field, Err: fmt.Errorf("want a JSON %s, not %s", te.Type.Kind(), te.Value)}
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &Error{Field: strings.Trim(msg, `"`), Err: errors.New("unknown field")}
	}
	return &Error{Field: "json", Err: err}
}

// Equal reports whether two policies are the same.
func (p Policy) Equal(q Policy) bool {
	return p.base == q.base && slices.Equal(p.fs, q.fs) && p.network == q.network && p.listenAny == q.listenAny &&
		slices.Equal(p.ports, q.ports) && slices.Equal(p.sockets, q.sockets) &&
		slices.Equal(p.mach, q.mach) && p.fork == q.fork && p.execOnly == q.execOnly && slices.Equal(p.waived, q.waived) && slices.Equal(p.broad, q.broad) &&
		slices.Equal(p.seatSrc, q.seatSrc) && p.validated == q.validated
}
