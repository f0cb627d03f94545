package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSONVersion is the newest version of the policy's JSON form. Version 2
// adds "accept_gaps" and "home", version 3 the network mode "proxy" with
// "allow_hosts", "deny_hosts" and "allow_addresses"; [ParseJSON] reads
// versions 1 to 3, and [Policy.MarshalJSON] writes the oldest version
// that has every field the policy uses, so older readers still take it.
const JSONVersion = 3

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
	AcceptGaps  []string     `json:"accept_gaps,omitempty"` // version 2
	Home        string       `json:"home,omitempty"`        // version 2
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
	// Version 3, mode "proxy".
	AllowHosts []string `json:"allow_hosts,omitempty"`
	DenyHosts  []string `json:"deny_hosts,omitempty"`
	AllowAddrs []string `json:"allow_addresses,omitempty"`
}

// MarshalJSON writes the versioned JSON form ({"version":1, ...}; 2 when
// the policy accepts gaps or names its home).
func (p Policy) MarshalJSON() ([]byte, error) {
	if !p.validated {
		return nil, errors.New("profile: MarshalJSON on a zero Policy")
	}
	j := jsonPolicy{Version: 1, Base: p.base.String(), UnixSockets: p.sockets, MachLookup: p.mach, Fork: p.fork, ExecOnly: p.execOnly, Seatbelt: p.seatSrc, Home: p.home}
	for _, g := range p.gaps {
		j.AcceptGaps = append(j.AcceptGaps, string(g))
	}
	if len(j.AcceptGaps) > 0 || j.Home != "" {
		j.Version = 2
	}
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
		j.Network.AllowHosts, j.Network.DenyHosts, j.Network.AllowAddrs = p.allowHosts, p.denyHosts, p.allowAddrs
		if p.network == NetworkProxy {
			j.Version = 3
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

// ParseJSON reads a policy in its versioned JSON form (documented in
// docs/policy.md). Keys are case-sensitive; an unknown key, a key given
// twice, a value of the wrong type and an invalid value are each an
// [*Error] naming the field (fs[0].subpath) with its line and column.
func ParseJSON(r io.Reader) (Policy, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Policy{}, &Error{Err: err}
	}
	loc := &locator{data: data, at: map[string]int64{}}
	p, err := parseJSON(data, loc)
	if err != nil {
		return Policy{}, loc.locate(err)
	}
	return p, nil
}

func parseJSON(data []byte, loc *locator) (Policy, error) {
	// The walk checks the document's shape: syntax, unknown and repeated
	// keys, trailing data. encoding/json then fills the struct.
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := loc.walk(dec, "", reflect.TypeFor[jsonPolicy](), 1); err != nil {
		return Policy{}, err
	}
	end := loc.skip(dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		return Policy{}, &Error{Err: errTrailing, pos: end + 1}
	}
	var j jsonPolicy
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return Policy{}, jsonError(err, loc)
	}
	if j.Version < 1 || j.Version > JSONVersion {
		return Policy{}, &Error{Field: "version", Value: fmt.Sprint(j.Version), Err: fmt.Errorf("unsupported policy version (want 1 to %d)", JSONVersion)}
	}
	if j.Version < 3 && j.Network != nil {
		n := j.Network
		for _, f := range []struct {
			name string
			set  bool
		}{{"network.mode", n.Mode == "proxy"}, {"network.allow_hosts", len(n.AllowHosts) > 0}, {"network.deny_hosts", len(n.DenyHosts) > 0}, {"network.allow_addresses", len(n.AllowAddrs) > 0}} {
			if f.set {
				return Policy{}, &Error{Field: f.name, Err: errors.New(`needs "version": 3`)}
			}
		}
	}
	if j.Version < 2 {
		// An older reader refuses these fields as unknown; a file that
		// uses them says so by its version.
		for _, f := range []struct {
			name string
			set  bool
		}{{"accept_gaps", len(j.AcceptGaps) > 0}, {"home", j.Home != ""}} {
			if f.set {
				return Policy{}, &Error{Field: f.name, Err: errors.New(`needs "version": 2`)}
			}
		}
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
		for i, port := range ports {
			field := fmt.Sprintf("network.ports[%d]", i)
			switch {
			case port == 0:
				return Policy{}, &Error{Field: field, Value: "0", Err: ErrPortZero}
			case port == AnyPort:
				// AnyPort is no JSON number: every port is "any_port".
				return Policy{}, &Error{Field: field, Value: fmt.Sprint(port), Err: errors.New("port must be 1..65535 (every port: \"any_port\": true)")}
			}
		}
		if j.Network.AnyPort {
			if len(ports) > 0 {
				return Policy{}, &Error{Field: "network.any_port", Err: errors.New("any_port and ports exclude each other")}
			}
			ports = []int{AnyPort}
		}
		opts = append(opts, Network(mode, ports...))
		for i, h := range j.Network.AllowHosts {
			opts = append(opts, renamed(fmt.Sprintf("network.allow_hosts[%d]", i), AllowHosts(h)))
		}
		for i, h := range j.Network.DenyHosts {
			opts = append(opts, renamed(fmt.Sprintf("network.deny_hosts[%d]", i), DenyHosts(h)))
		}
		for i, a := range j.Network.AllowAddrs {
			opts = append(opts, renamed(fmt.Sprintf("network.allow_addresses[%d]", i), AllowAddresses(a)))
		}
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
	for i, g := range j.AcceptGaps {
		opts = append(opts, renamed(fmt.Sprintf("accept_gaps[%d]", i), AcceptGaps(Gap(g))))
	}
	if j.Home != "" {
		opts = append(opts, Home(j.Home))
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

var errTrailing = errors.New("trailing data after the policy object")

// jsonError names the field behind an encoding/json error.
func jsonError(err error, loc *locator) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path, off := loc.find(te.Field, te.Offset)
		want := jsonKind[te.Type.Kind()]
		if want == "" {
			want = te.Type.Kind().String()
		}
		return &Error{Field: path, Err: fmt.Errorf("want %s, not %s", want, te.Value), pos: off + 1}
	}
	return &Error{Err: err}
}

// jsonKind names a Go kind as a JSON value.
var jsonKind = map[reflect.Kind]string{
	reflect.Struct: "an object", reflect.Map: "an object", reflect.Slice: "an array",
	reflect.String: "a string", reflect.Int: "a number", reflect.Bool: "true or false",
}

// locator records where each value of a JSON document starts, by field
// path (fs[0].subpath), so that errors can name a line and column.
type locator struct {
	data []byte
	at   map[string]int64
}

// skip returns the offset of the next token at or after off: past white
// space and the separators encoding/json's Decoder leaves before it.
func (l *locator) skip(off int64) int64 {
	for off < int64(len(l.data)) {
		switch l.data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

// maxJSONDepth is the deepest nesting of arrays and objects (the policy
// object counts as 1) a policy document may have; its own shape needs 4
// (object, fs, rule, access). The locator records a field path per value,
// as long as the value's depth, so without a limit memory grows with the
// square of the depth: 200 KB nested 100,000 deep took 24 GiB (issue 20),
// long before encoding/json's own limit of 10,000 applies.
const maxJSONDepth = 32

// walk reads one value at path, whose Go form is t (nil: not checked), at
// depth (the number of arrays and objects it is in, plus one), recording
// offsets and refusing unknown and repeated keys and nesting deeper than
// maxJSONDepth.
func (l *locator) walk(dec *json.Decoder, path string, t reflect.Type, depth int) error {
	start := l.skip(dec.InputOffset())
	if depth > maxJSONDepth && start < int64(len(l.data)) && (l.data[start] == '[' || l.data[start] == '{') {
		return &Error{Err: fmt.Errorf("arrays and objects nested deeper than %d levels", maxJSONDepth), pos: start + 1}
	}
	// Below a value whose type is not checked (t nil: inside a field of
	// another type, which encoding/json reports at that field) no path is
	// recorded or built: a long key over a long array would otherwise cost
	// memory quadratic in the document's size again.
	if t != nil {
		l.at[path] = start
	}
	tok, err := dec.Token()
	if err != nil {
		return l.syntax(err, start)
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			keyStart := l.skip(dec.InputOffset())
			tok, err := dec.Token()
			if err != nil {
				return l.syntax(err, keyStart)
			}
			key := tok.(string)
			field := key
			if t == nil {
				field = ""
			} else if path != "" {
				field = path + "." + key
			}
			if seen[key] {
				return &Error{Field: field, Err: errors.New("repeated key"), pos: keyStart + 1}
			}
			seen[key] = true
			ft, ok := fieldType(t, key)
			if !ok {
				return &Error{Field: field, Err: errors.New("unknown field"), pos: keyStart + 1}
			}
			if err := l.walk(dec, field, ft, depth+1); err != nil {
				return err
			}
		}
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Slice {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			elemPath := ""
			if elem != nil {
				elemPath = fmt.Sprintf("%s[%d]", path, i)
			}
			if err := l.walk(dec, elemPath, elem, depth+1); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	end := l.skip(dec.InputOffset())
	if _, err := dec.Token(); err != nil {
		return l.syntax(err, end)
	}
	return nil
}

// fieldType returns the type of the struct field of t whose JSON name is
// key. A t that is not a struct accepts any key: encoding/json reports the
// type mismatch.
func fieldType(t reflect.Type, key string) (reflect.Type, bool) {
	if t == nil || t.Kind() == reflect.Pointer && t.Elem().Kind() != reflect.Struct {
		return nil, true
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, true
	}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == key {
			return f.Type, true
		}
	}
	return nil, false
}

// syntax turns a Decoder error into an *Error at its offset.
func (l *locator) syntax(err error, at int64) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && strings.Contains(se.Error(), "unexpected end of JSON input"):
		// Go 1.27's encoding/json reports a truncated input this way.
		return &Error{Err: errors.New("unexpected end of the policy"), pos: int64(len(l.data)) + 1}
	case errors.As(err, &se):
		return &Error{Err: errors.New(strings.TrimPrefix(se.Error(), "json: ")), pos: l.offending(se) + 1}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Err: errors.New("unexpected end of the policy"), pos: int64(len(l.data)) + 1}
	}
	return &Error{Err: err, pos: at + 1}
}

// offending returns the offset of the byte a syntax error names: a
// Decoder's Token counts the bytes before it up to Go 1.26 and the byte
// too from Go 1.27, so the offset is checked against the character the
// message quotes ("invalid character 'x' ...").
func (l *locator) offending(se *json.SyntaxError) int64 {
	at := se.Offset
	msg := se.Error()
	i := strings.Index(msg, "invalid character '")
	if i < 0 {
		return at
	}
	rest := msg[i+len("invalid character "):]
	j := strings.Index(rest[1:], "' ")
	if j < 0 {
		return at
	}
	c, _, tail, err := strconv.UnquoteChar(rest[1:j+1], '\'')
	if err != nil || tail != "" || c > 0x7f {
		return at
	}
	switch {
	case at >= 0 && at < int64(len(l.data)) && l.data[at] == byte(c):
		return at
	case at > 0 && at <= int64(len(l.data)) && l.data[at-1] == byte(c):
		return at - 1
	}
	return at
}

// find returns the recorded path that encoding/json's dotted field names
// and that starts last before off, with its offset. Up to Go 1.26 the
// field has no indices (fs.access); from Go 1.27 an index is a path
// element of its own (fs.0.access).
func (l *locator) find(field string, off int64) (string, int64) {
	best, bestAt := field, int64(-1)
	indexed := bracketIndices(field)
	for p, at := range l.at {
		if at < off && at > bestAt && (stripIndices(p) == field || p == indexed) {
			best, bestAt = p, at
		}
	}
	if bestAt < 0 {
		return field, off
	}
	return best, bestAt
}

// bracketIndices writes Go 1.27's fs.0.access as fs[0].access.
func bracketIndices(field string) string {
	var b strings.Builder
	for i, e := range strings.Split(field, ".") {
		switch {
		case e != "" && strings.Trim(e, "0123456789") == "":
			b.WriteString("[" + e + "]")
		case i > 0:
			b.WriteString("." + e)
		default:
			b.WriteString(e)
		}
	}
	return b.String()
}

func stripIndices(p string) string {
	var b strings.Builder
	depth := 0
	for _, r := range p {
		switch {
		case r == '[':
			depth++
		case r == ']':
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// locate fills in the line and column of err's field, or of its nearest
// recorded parent (fs[0] for a rule missing its path).
func (l *locator) locate(err error) error {
	var pe *Error
	if !errors.As(err, &pe) {
		return err
	}
	off := pe.pos - 1
	if pe.pos == 0 {
		for f := pe.Field; ; {
			if at, ok := l.at[f]; ok {
				off = at
				break
			}
			i := strings.LastIndexAny(f, ".[")
			if i < 0 {
				break
			}
			f = f[:i]
		}
		if off < 0 {
			off = l.at[""]
		}
	}
	pe.Line, pe.Column = lineColumn(l.data, off)
	return pe
}

// lineColumn turns a byte offset into a 1-based line and column (in
// characters).
func lineColumn(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, utf8.RuneCount(before) + 1
}

// Equal reports whether two policies are the same.
func (p Policy) Equal(q Policy) bool {
	return p.base == q.base && slices.Equal(p.fs, q.fs) && p.network == q.network && p.listenAny == q.listenAny &&
		slices.Equal(p.ports, q.ports) && slices.Equal(p.sockets, q.sockets) &&
		slices.Equal(p.mach, q.mach) && p.fork == q.fork && p.execOnly == q.execOnly && slices.Equal(p.waived, q.waived) && slices.Equal(p.broad, q.broad) &&
		slices.Equal(p.seatSrc, q.seatSrc) && slices.Equal(p.gaps, q.gaps) && p.home == q.home && p.validated == q.validated &&
		slices.Equal(p.allowHosts, q.allowHosts) && slices.Equal(p.denyHosts, q.denyHosts) && slices.Equal(p.allowAddrs, q.allowAddrs)
}
