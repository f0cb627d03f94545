package linuxsandbox

import "testing"

// TestKernelAtLeast: the release comparison NewNamesAvailable makes, on
// the spellings distributions give.
func TestKernelAtLeast(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want bool
	}{
		{"5.19.0", true}, {"5.18.19", false}, {"6.1.0-40-amd64", true}, {"6.18.44-fc-v1147", true},
		{"5.15.0-91-generic", false}, {"4.19.0", false}, {"10.0", true}, {"5", false}, {"", false}, {"x.y", false},
	} {
		if got := kernelAtLeast(c.rel, 5, 19); got != c.want {
			t.Errorf("kernelAtLeast(%q, 5, 19) = %v, want %v", c.rel, got, c.want)
		}
	}
}
