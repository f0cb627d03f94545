package hostrule

import (
	"net/netip"
	"testing"
)

// TestRT23AzureWireServer: Azure serves its platform endpoint (WireServer:
// the VM agent's goal state, extension settings and certificates; and the
// VM's DNS) on 168.63.129.16, a public-range address on every Azure VM
// ("What is IP address 168.63.129.16?", learn.microsoft.com/azure/
// virtual-network/what-is-ip-address-168-63-129-16). A name resolving to
// it is a cloud metadata target like 169.254.169.254.
func TestRT23AzureWireServer(t *testing.T) {
	for _, s := range []string{"168.63.129.16", "::ffff:168.63.129.16", "64:ff9b::a83f:8110"} {
		if c := Classify(netip.MustParseAddr(s)); c == Public {
			t.Errorf("Classify(%s) = %s, want a special class", s, c)
		}
	}
}
