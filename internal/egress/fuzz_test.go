package egress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"github.com", "*.pythonhosted.org", "github.com:443", "127.0.0.1", "[::1]:80", "*.com", "a..b", "0x7f.1", "xn--bcher-kva.example:8080", "fd00::/8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePattern(s)
		if err != nil {
			if !errors.Is(err, ErrPattern) && !errors.Is(err, ErrIPLiteral) {
				t.Fatalf("ParsePattern(%q): %v wraps neither ErrPattern nor ErrIPLiteral", s, err)
			}
			return
		}
		// A parsed pattern reads back to itself, is lower case ASCII and
		// never an address.
		again, err := ParsePattern(p.String())
		if err != nil || again != p {
			t.Fatalf("ParsePattern(%q) = %+v; its String %q reads as %+v, %v", s, p, p.String(), again, err)
		}
		if looksLikeAddress(strings.TrimPrefix(p.Host, "*.")) || strings.ToLower(p.Host) != p.Host {
			t.Fatalf("ParsePattern(%q) = %+v", s, p)
		}
		if p.Port < 0 || p.Port > 65535 {
			t.Fatalf("port %d", p.Port)
		}
		// A name pattern matches its name; a wildcard a name below it and
		// not its suffix.
		if suffix, ok := p.wildcard(); ok {
			if p.Match(suffix[1:], p.Port) || !p.Match("x"+suffix, p.Port) {
				t.Fatalf("%+v: wildcard matching", p)
			}
		} else if !p.Match(p.Host, p.Port) || p.Match("x."+p.Host, p.Port) {
			t.Fatalf("%+v: name matching", p)
		}
	})
}

func FuzzSOCKSRequest(f *testing.F) {
	f.Add([]byte{5, 1, 0, 3, 11, 'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'c', 'o', 'm', 1, 187})
	f.Add([]byte{5, 1, 0, 1, 127, 0, 0, 1, 0, 80})
	f.Add([]byte{5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1, 0, 80})
	f.Add([]byte{5, 2, 0, 1, 1, 2, 3, 4, 0, 80})
	f.Add([]byte{5, 1, 0, 9})
	f.Add([]byte{4, 1, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		req, err := readSOCKSRequest(r)
		var se *errSOCKS
		switch {
		case err == nil:
			if req.cmd != socksCmdConnect || req.host == "" || req.port < 0 || req.port > 65535 {
				t.Fatalf("% x: accepted %+v", b, req)
			}
			// What was read is exactly the request's encoding.
			used := len(b) - r.Len()
			want := 4 + 2
			switch b[3] {
			case socksAtypIPv4:
				want += 4
			case socksAtypIPv6:
				want += 16
			case socksAtypDomain:
				want += 1 + int(b[4])
				if req.host != string(b[5:5+int(b[4])]) {
					t.Fatalf("% x: host %q", b, req.host)
				}
			}
			if used != want {
				t.Fatalf("% x: read %d bytes, the request has %d", b, used, want)
			}
			if req.addr.IsValid() && req.addr.Is4In6() {
				t.Fatalf("% x: mapped address kept: %v", b, req.addr)
			}
			if p := int(binary.BigEndian.Uint16(b[used-2 : used])); p != req.port {
				t.Fatalf("% x: port %d", b, req.port)
			}
		case errors.As(err, &se):
			if se.code == socksSucceeded {
				t.Fatalf("% x: an error with reply 0", b)
			}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		default:
			t.Fatalf("% x: %v", b, err)
		}
	})
}
