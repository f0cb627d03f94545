package hostrule

import (
	"errors"
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
