package egress

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

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
