package pathresolve_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/pathresolve/macfs"
)

func TestParseFirmlinks(t *testing.T) {
	in := "/Users\tUsers\n\n# comment\n  /usr/local   usr/local  \n/System/Library/Caches\tSystem/Library/Caches\n"
	got, err := pathresolve.ParseFirmlinks(strings.NewReader(in))
	must(t, err)
	want := []pathresolve.Firmlink{
		{System: "/Users", Data: "/System/Volumes/Data/Users"},
		{System: "/usr/local", Data: "/System/Volumes/Data/usr/local"},
		{System: "/System/Library/Caches", Data: "/System/Volumes/Data/System/Library/Caches"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseFirmlinks (-want +got):\n%s", diff)
	}
}

func TestParseFirmlinksSimFile(t *testing.T) {
	fsys := macfs.NewMacOS()
	data, err := fsys.ReadFile("/usr/share/firmlinks")
	must(t, err)
	got, err := pathresolve.ParseFirmlinks(strings.NewReader(string(data)))
	must(t, err)
	if diff := cmp.Diff(fsys.Firmlinks(), got); diff != "" {
		t.Errorf("parsed /usr/share/firmlinks differs from the tree's firmlinks (-want +got):\n%s", diff)
	}
}

func TestParseFirmlinksErrors(t *testing.T) {
	for _, in := range []string{
		"/Users\n",               // one field
		"/Users Users extra\n",   // three fields
		"Users\tUsers\n",         // relative system path
		"/\tx\n",                 // root
		"/Users\t/Users\n",       // absolute data path
		"/Users\t../Users\n",     // escapes the data volume
		"/Users/\tUsers\n",       // not normalised
		"/ok\tok\n/bad\tbad/.\n", // second line bad
	} {
		_, err := pathresolve.ParseFirmlinks(strings.NewReader(in))
		if !errors.Is(err, pathresolve.ErrFirmlinkSyntax) {
			t.Errorf("ParseFirmlinks(%q) = %v, want ErrFirmlinkSyntax", in, err)
		}
	}
}
