package egress

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/procage-go/procage/internal/egress/hostrule"
)

// SOCKS5 (RFC 1928), the CONNECT command only, with username/password
// authentication (RFC 1929) and no other method: the run's credential.
// Written here rather than taken from a module: github.com/armon/go-socks5
// has not changed since 2016, and the maintained ones are not on the module
// proxy procage builds from; the part needed is short.
const (
	socksVersion    = 5
	socksNoAuth     = 0
	socksUserPass   = 2
	socksAuthVer    = 1 // RFC 1929's subnegotiation version
	socksNoMethod   = 0xff
	socksCmdConnect = 1
	socksAtypIPv4   = 1
	socksAtypDomain = 3
	socksAtypIPv6   = 4
)

// SOCKS5 reply codes (RFC 1928 section 6).
const (
	socksSucceeded       = 0
	socksGeneralFailure  = 1
	socksNotAllowed      = 2 // "connection not allowed by ruleset"
	socksNetUnreachable  = 3
	socksHostUnreachable = 4
	socksRefused         = 5
	socksCmdUnsupported  = 7
	socksAtypUnsupported = 8
)

// socksRequest is a parsed SOCKS5 request.
type socksRequest struct {
	cmd  byte
	host string // a domain name as sent, or an address's text
	addr netip.Addr
	port int
}

// errSOCKS is a request the server answers with code before closing.
type errSOCKS struct {
	code byte
	msg  string
}

func (e *errSOCKS) Error() string { return "socks5: " + e.msg }

// readSOCKSGreeting reads the version and method list and reports whether
// the client offers username/password (RFC 1929), the only method served.
func readSOCKSGreeting(r io.Reader) (bool, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return false, err
	}
	if hdr[0] != socksVersion {
		return false, fmt.Errorf("socks5: version %d", hdr[0])
	}
	if hdr[1] == 0 {
		return false, errors.New("socks5: no authentication method offered")
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(r, methods); err != nil {
		return false, err
	}
	for _, m := range methods {
		if m == socksUserPass {
			return true, nil
		}
	}
	return false, nil
}

// readSOCKSUserPass reads RFC 1929's username/password request.
func readSOCKSUserPass(r io.Reader) (user, password string, err error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return "", "", err
	}
	if hdr[0] != socksAuthVer {
		return "", "", fmt.Errorf("socks5: username/password version %d", hdr[0])
	}
	u := make([]byte, hdr[1])
	if _, err := io.ReadFull(r, u); err != nil {
		return "", "", err
	}
	var n [1]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", "", err
	}
	pw := make([]byte, n[0])
	if _, err := io.ReadFull(r, pw); err != nil {
		return "", "", err
	}
	return string(u), string(pw), nil
}

// readSOCKSRequest reads one request (RFC 1928 section 4). An error of
// type *errSOCKS carries the reply code to send.
func readSOCKSRequest(r io.Reader) (socksRequest, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return socksRequest{}, err
	}
	if hdr[0] != socksVersion {
		return socksRequest{}, &errSOCKS{socksGeneralFailure, fmt.Sprintf("version %d in request", hdr[0])}
	}
	if hdr[2] != 0 {
		return socksRequest{}, &errSOCKS{socksGeneralFailure, "reserved byte is not 0"}
	}
	req := socksRequest{cmd: hdr[1]}
	switch hdr[3] {
	case socksAtypIPv4:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return socksRequest{}, err
		}
		req.addr = netip.AddrFrom4(b)
	case socksAtypIPv6:
		var b [16]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return socksRequest{}, err
		}
		req.addr = netip.AddrFrom16(b).Unmap()
	case socksAtypDomain:
		var n [1]byte
		if _, err := io.ReadFull(r, n[:]); err != nil {
			return socksRequest{}, err
		}
		if n[0] == 0 {
			return socksRequest{}, &errSOCKS{socksGeneralFailure, "empty domain name"}
		}
		name := make([]byte, n[0])
		if _, err := io.ReadFull(r, name); err != nil {
			return socksRequest{}, err
		}
		req.host = string(name)
	default:
		return socksRequest{}, &errSOCKS{socksAtypUnsupported, fmt.Sprintf("address type %d", hdr[3])}
	}
	var pb [2]byte
	if _, err := io.ReadFull(r, pb[:]); err != nil {
		return socksRequest{}, err
	}
	req.port = int(binary.BigEndian.Uint16(pb[:]))
	if req.addr.IsValid() {
		req.host = req.addr.String()
	}
	if req.cmd != socksCmdConnect {
		return req, &errSOCKS{socksCmdUnsupported, fmt.Sprintf("command %d (only CONNECT)", req.cmd)}
	}
	return req, nil
}

// socksReply writes a reply with the bound address (zero for a failure).
func socksReply(w io.Writer, code byte, bound netip.AddrPort) error {
	b := []byte{socksVersion, code, 0}
	a := bound.Addr().Unmap()
	if a.Is6() {
		b = append(b, socksAtypIPv6)
		s := a.As16()
		b = append(b, s[:]...)
	} else {
		b = append(b, socksAtypIPv4)
		if a.Is4() {
			s := a.As4()
			b = append(b, s[:]...)
		} else {
			b = append(b, 0, 0, 0, 0)
		}
	}
	b = binary.BigEndian.AppendUint16(b, bound.Port())
	_, err := w.Write(b)
	return err
}

// serveSOCKS serves one SOCKS5 client on c, whose bytes br has begun to
// read.
func (p *Proxy) serveSOCKS(c net.Conn, br *bufio.Reader) {
	userPass, err := readSOCKSGreeting(br)
	if err != nil {
		p.socksMalformed("greeting", err)
		return
	}
	if !userPass {
		// Without the credential (no authentication offered): refused.
		rec := p.begin(ProtoSOCKS, "CONNECT", "", 0)
		rec.Verdict, rec.Reason = hostrule.DeniedInvalid, "no username/password method offered: "+authText
		_, _ = c.Write([]byte{socksVersion, socksNoMethod})
		p.finish(rec)
		return
	}
	if _, err := c.Write([]byte{socksVersion, socksUserPass}); err != nil {
		return
	}
	user, password, err := readSOCKSUserPass(br)
	if err != nil {
		p.socksMalformed("username/password request", err)
		return
	}
	if !p.cfg.Credential.match(user, password) {
		rec := p.begin(ProtoSOCKS, "CONNECT", "", 0)
		rec.Verdict, rec.Reason = hostrule.DeniedInvalid, authText
		_, _ = c.Write([]byte{socksAuthVer, 1})
		p.finish(rec)
		return
	}
	if _, err := c.Write([]byte{socksAuthVer, 0}); err != nil {
		return
	}
	req, err := readSOCKSRequest(br)
	var se *errSOCKS
	if errors.As(err, &se) {
		rec := p.begin(ProtoSOCKS, "CONNECT", req.host, req.port)
		rec.Verdict, rec.Reason = hostrule.DeniedInvalid, se.msg
		_ = socksReply(c, se.code, netip.AddrPort{})
		p.finish(rec)
		return
	}
	if err != nil {
		p.socksMalformed("request", err)
		return
	}
	rec := p.begin(ProtoSOCKS, "CONNECT", req.host, req.port)
	defer p.finish(rec)
	name, d := p.decide(p.ctx, req.host, req.port)
	rec.Host = name
	setDecision(rec, d)
	if d.Verdict != hostrule.Allowed {
		// SOCKS5 has no text in a reply: the code says "not allowed by
		// ruleset", and the record keeps the reason.
		code := byte(socksNotAllowed)
		if d.Verdict == hostrule.DeniedResolve {
			code = socksHostUnreachable
		}
		rec.Err = denyText(name, req.port, d)
		_ = socksReply(c, code, netip.AddrPort{})
		return
	}
	up, ap, err := p.dial(p.ctx, d.Addrs, req.port)
	if err != nil {
		rec.Err = err.Error()
		_ = socksReply(c, dialCode(err), netip.AddrPort{})
		return
	}
	rec.Addr = ap
	defer up.Close()
	if !p.conns.Add(up) {
		return
	}
	defer p.conns.Remove(up)
	var bound netip.AddrPort
	if ta, ok := up.LocalAddr().(*net.TCPAddr); ok {
		bound = ta.AddrPort()
	}
	if err := socksReply(c, socksSucceeded, bound); err != nil {
		rec.Err = err.Error()
		return
	}
	_ = c.SetDeadline(time.Time{})
	sent, recv, err := p.splice(c, up, br)
	rec.Sent, rec.Received = sent, recv
	if err != nil {
		rec.Err = err.Error()
	}
}

// socksMalformed records a SOCKS5 exchange that ended in what: cut short
// or malformed, before there was a request to decide on.
func (p *Proxy) socksMalformed(what string, err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New("cut short")
	}
	rec := p.begin(ProtoSOCKS, "CONNECT", "", 0)
	rec.Verdict, rec.Reason = hostrule.DeniedInvalid, "malformed SOCKS5 "+what+": "+err.Error()
	p.finish(rec)
}

// dialCode maps a dial error to a SOCKS5 reply code.
func dialCode(err error) byte {
	var oe *net.OpError
	switch {
	case errors.Is(err, errConnRefused):
		return socksRefused
	case errors.As(err, &oe) && oe.Timeout():
		return socksHostUnreachable
	}
	return socksNetUnreachable
}
