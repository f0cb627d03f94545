package cage

import "testing"

// An accepted link is matched as the backend's kernel compares names:
// case-folded for Seatbelt, exactly on Linux, where a case variant is
// another file that the caller did not accept.
func TestAcceptedLinkCase(t *testing.T) {
	for _, tc := range []struct {
		backend Backend
		link    string
		want    bool
	}{
		{BackendMacOS, "/a/Cache", true},
		{BackendMacOS, "/a/cache", true},
		{BackendLinux, "/a/Cache", true},
		{BackendLinux, "/a/cache", false},
		{BackendLinux, "/a/other", false},
	} {
		c := config{backend: tc.backend, links: []string{"/a/Cache"}}
		if got := c.acceptedLink(tc.link); got != tc.want {
			t.Errorf("%v: acceptedLink(%q) = %v, want %v", tc.backend, tc.link, got, tc.want)
		}
	}
}
