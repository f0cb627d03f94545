package egress

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/procage-go/procage/internal/egress/hostrule"
)

// Proto is how a request reached the proxy.
type Proto string

const (
	// ProtoHTTP: an absolute-form HTTP request (http://host/path).
	ProtoHTTP Proto = "http"
	// ProtoConnect: an HTTP CONNECT tunnel (https through the proxy).
	ProtoConnect Proto = "connect"
	// ProtoSOCKS: a SOCKS5 CONNECT.
	ProtoSOCKS Proto = "socks5"
)

// Request is the record of one request: what the client asked for, the
// decision, and what was carried.
type Request struct {
	// Start is when the request was read; Duration how long it lasted.
	Start    time.Time
	Duration time.Duration
	// Proto is how it came; Method the HTTP method, or CONNECT for a
	// tunnel and a SOCKS request.
	Proto  Proto
	Method string
	// Host is the name (normalised) or address the client asked for,
	// Port its port. Text a client chose (Method, Host; in Reason and
	// Err) is kept printable, bytes outside printable ASCII as \xNN, and
	// clipped to a few hundred bytes.
	Host string
	Port int
	// Verdict, Rule and Reason are the decision's ([hostrule.Decision]).
	Verdict hostrule.Verdict
	Rule    string
	Reason  string
	// Addr is the upstream address dialed; zero when none was.
	Addr netip.AddrPort
	// Sent counts the bytes carried from the client upstream (a forwarded
	// request's line, headers and body; a tunnel's payload), Received
	// those carried back (a response body, a tunnel's payload).
	Sent, Received int64
	// Status is the HTTP status the client got (ProtoHTTP and the CONNECT
	// answer; 0 for SOCKS).
	Status int
	// Err is what failed after the decision ("" if nothing did).
	Err string

	seq int
}

// Allowed reports whether the request was allowed.
func (r Request) Allowed() bool { return r.Verdict == hostrule.Allowed }

// String is one line for a log: "allowed CONNECT github.com:443 by
// github.com -> 140.82.112.3:443 sent 517 received 4096".
func (r Request) String() string {
	var b strings.Builder
	if r.Allowed() {
		b.WriteString("allowed ")
	} else {
		b.WriteString("denied ")
	}
	b.WriteString(r.Method)
	if r.Proto == ProtoSOCKS {
		b.WriteString(" (socks5)")
	}
	b.WriteByte(' ')
	b.WriteString(hostPort(r.Host, r.Port))
	if r.Rule != "" {
		b.WriteString(" by " + r.Rule)
	}
	if !r.Allowed() {
		b.WriteString(": " + r.Reason)
	}
	if r.Addr.IsValid() {
		b.WriteString(" -> " + r.Addr.String())
	}
	if r.Allowed() {
		b.WriteString(" sent " + strconv.FormatInt(r.Sent, 10) + " received " + strconv.FormatInt(r.Received, 10))
	}
	if r.Err != "" {
		b.WriteString("; error: " + r.Err)
	}
	return b.String()
}

func hostPort(host string, port int) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(port)
	}
	return host + ":" + strconv.Itoa(port)
}

// denyText is the body of a refusal: it names the host and what would
// allow it, so the client's log explains itself.
func denyText(host string, port int, d hostrule.Decision) string {
	var hint string
	switch d.Verdict {
	case hostrule.DeniedNoRule:
		if _, err := netip.ParseAddr(host); err == nil {
			hint = "allow the address with --allow-address " + host + ", or ask for the host by name"
		} else {
			hint = "allow it with --allow-host " + host
		}
	case hostrule.DeniedByRule:
		hint = "a deny rule wins over every allow: remove --deny-host " + d.Rule
	case hostrule.DeniedAddress:
		if len(d.Refused) == 0 {
			hint = "try again"
			break
		}
		hint = "allow the address with --allow-address " + d.Refused[0].Addr.String()
	case hostrule.DeniedResolve:
		hint = "check the name"
	default:
		hint = "send a valid host and port"
	}
	return "procage egress proxy: " + hostPort(host, port) + " refused: " + d.Reason + "; " + hint + "\n"
}
