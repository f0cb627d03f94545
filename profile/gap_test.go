package profile

import (
	"errors"
	"strings"
	"testing"
)

func TestParseGap(t *testing.T) {
	for _, g := range Gaps() {
		if got, err := ParseGap(string(g)); err != nil || got != g {
			t.Errorf("ParseGap(%q) = %q, %v", g, got, err)
		}
	}
	if _, err := ParseGap("nope"); err == nil {
		t.Error("ParseGap(nope): nil error")
	}
}

// TestGapError: the error names each part with its detail, and Has finds
// exactly the gaps listed.
func TestGapError(t *testing.T) {
	var err error = &GapError{Parts: []GapPart{
		{Gap: GapSecrets, Class: Secrets, Path: "/home/u", Protected: []string{"/home/u/.ssh"}, Detail: "secrets protects /home/u/.ssh inside the readable tree /home/u"},
		{Gap: GapLoopback, Detail: "ports, not addresses"},
	}}
	want := "linux cannot enforce: secrets-inside-allowed-tree (secrets protects /home/u/.ssh inside the readable tree /home/u); network-loopback (ports, not addresses)"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	ge, ok := errors.AsType[*GapError](err)
	if !ok || !ge.Has(GapSecrets) || !ge.Has(GapLoopback) || ge.Has(GapMach) {
		t.Errorf("Has: %v", ge)
	}
	if s := ge.Parts[1].String(); !strings.HasPrefix(s, "network-loopback: ") {
		t.Errorf("GapPart.String() = %q", s)
	}
}
