package seatbelt_test

import (
	"errors"
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
	"github.com/procage-go/procage/profile/sim"
)

// TestUnfilteredDenies: each deny that would rely on an unfiltered rule
// overriding a filtered allow holds under every reading of Seatbelt
// (decide checks all of sim.Variants). Each case was open under some
// variant before the lowering gave such denies a filter.
func TestUnfilteredDenies(t *testing.T) {
	tests := []struct {
		name   string
		opts   []profile.Option
		access sim.Access
	}{
		{"setugid in a writable tree", []profile.Option{profile.ReadWrite(home)},
			sim.Access{Op: "file-write-setugid", Path: home + "/bin/tool"}},
		{"seatbelt deny network* after network on", []profile.Option{profile.Network(profile.NetworkOn), profile.Seatbelt(`(deny network*)`)},
			sim.Access{Op: "network-outbound", Addr: "10.0.0.1:443"}},
		{"seatbelt deny network* after a Unix socket grant", []profile.Option{profile.UnixSocket("/private/var/run/s.sock"), profile.Seatbelt(`(deny network*)`)},
			sim.Access{Op: "network-outbound", Addr: "/private/var/run/s.sock"}},
		{"seatbelt deny file-write* after a write grant", []profile.Option{profile.ReadWrite(home + "/src"), profile.Seatbelt(`(deny file-write*)`)},
			sim.Access{Op: "file-write-data", Path: home + "/src/main.go"}},
		{"hard link of a secret out under an allowed name", []profile.Option{profile.Seatbelt(`(allow file-link (subpath "/Users/alice"))`)},
			sim.Access{Op: "file-link", Path: home + "/x", Source: home + "/.ssh/id_rsa"}},
		{"hard link of a prepared file in as a startup file", []profile.Option{profile.Seatbelt(`(allow file-link (subpath "/Users/alice") (subpath "/private/tmp"))`)},
			sim.Access{Op: "file-link", Path: home + "/.zshrc", Source: "/private/tmp/evil"}},
		{"clone of a secret", []profile.Option{profile.Seatbelt(`(allow file-clone (subpath "/Users/alice"))`)},
			sim.Access{Op: "file-clone", Path: home + "/x", Source: home + "/.aws/credentials"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := profile.New(profile.BaseV1, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if d := decide(t, p, tt.access); d.Allowed {
				t.Errorf("%s: allowed (%s)", tt.access, d)
			}
		})
	}
	// With the classes waived the links are the caller's to allow.
	p, err := profile.New(profile.BaseV1, profile.Waive(profile.Classes()...), profile.Seatbelt(`(allow file-link (subpath "/Users/alice"))`))
	if err != nil {
		t.Fatal(err)
	}
	if d := decide(t, p, sim.Access{Op: "file-link", Path: home + "/x", Source: home + "/y"}); !d.Allowed {
		t.Errorf("link with every class waived: %s", d)
	}
}

// TestLowerRefusesUnfilteredDeny: an unfiltered deny of an operation with
// no match-everything filter is refused when a filtered allow of another
// layer names it, rather than trusted to override it.
func TestLowerRefusesUnfilteredDeny(t *testing.T) {
	p, err := profile.New(profile.BaseV1, profile.MachLookup("com.example.a"), profile.Seatbelt(`(deny mach-lookup)`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seatbelt.Lower(p, profile.Env{}); !errors.Is(err, seatbelt.ErrUnfilteredDeny) {
		t.Errorf("Lower = %v, want ErrUnfilteredDeny", err)
	}
	// A Seatbelt-layer (deny default) would have to override every grant
	// before it, filtered ones included: refused, not trusted.
	d, err := profile.New(profile.BaseV1, profile.Read("/usr/share"), profile.Seatbelt(`(deny default)`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seatbelt.Lower(d, profile.Env{}); !errors.Is(err, seatbelt.ErrUnfilteredDeny) {
		t.Errorf("Lower with a Seatbelt-layer (deny default) = %v, want ErrUnfilteredDeny", err)
	}
	// No filtered allow of it before: nothing to override, accepted.
	q, err := profile.New(profile.BaseV1, profile.Seatbelt(`(deny process-fork)`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seatbelt.Lower(q, profile.Env{}); err != nil {
		t.Errorf("Lower: %v", err)
	}
}
