//go:build linux || darwin

package cage_test

import (
	"context"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// docProxyExample runs the package documentation's proxy-mode example,
// verbatim between the markers (TestPackageDocProxyExample checks that it
// still is), and hands back its output and record.
func docProxyExample(ctx context.Context, gotOut *[]byte, gotLog *[]cage.NetRequest) error {
	// doc begin
	policy, err := profile.New(profile.BaseV1, profile.AllowHosts("github.com"))
	if err != nil {
		return err
	}
	c, err := cage.New(policy, cage.AcceptGaps(profile.GapProxyDirect), cage.WithLinuxTier(cage.TierT2))
	if err != nil {
		return err
	}
	cmd := c.Command(ctx, "/usr/bin/curl", "-sS", "http://example.com/")
	out, err := cmd.Output() // procage egress proxy: example.com:80 refused: ...; allow it with --allow-host example.com
	log := cmd.NetLog()      // one record: denied GET example.com:80: no rule allows host example.com on port 80
	// doc end
	*gotOut, *gotLog = out, log
	return err
}

// TestPackageDocProxyExample: the package documentation's proxy-mode
// example is docProxyExample's code, and it does what its comments say:
// curl, caged, asks for a host no rule allows, gets the proxy's 403 text
// naming the flag, and the run's record has that one request. Nothing
// leaves this machine: the proxy refuses the name before any lookup.
func TestPackageDocProxyExample(t *testing.T) {
	var out []byte
	var log []cage.NetRequest
	if err := docProxyExample(t.Context(), &out, &log); err != nil {
		skipIfTooOld(t, err)
		t.Fatalf("the example: %v (output %q)", err, out)
	}
	if w := "procage egress proxy: example.com:80 refused: no rule allows host example.com on port 80; allow it with --allow-host example.com\n"; string(out) != w {
		t.Errorf("curl printed %q, want %q", out, w)
	}
	if len(log) != 1 || log[0].String() != "denied GET example.com:80: no rule allows host example.com on port 80" || log[0].Verdict != cage.NetDeniedNoRule {
		t.Errorf("NetLog: %v", log)
	}
	// Last: a binary run away from the source tree skips here.
	docHolds(t, "doc_proxy_example_test.go", nil)

}
