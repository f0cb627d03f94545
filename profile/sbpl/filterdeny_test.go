package sbpl

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An unfiltered deny is split: the operations a filter can match in full
// get it, the rest stay unfiltered; allows and filtered denies are kept.
func TestFilterDenies(t *testing.T) {
	in, err := ParseRules(`(deny file-write* network-outbound mach-lookup process-exec)
(deny default)
(deny file-read* (subpath "/x"))
(allow file-read*)`)
	if err != nil {
		t.Fatal(err)
	}
	in[0].Comment = "why"
	var got []string
	for _, r := range FilterDenies(in) {
		text, err := r.Text()
		if err != nil {
			t.Fatal(err)
		}
		if r.Comment != "" {
			text += " ; " + r.Comment
		}
		got = append(got, text)
	}
	want := []string{
		`(deny file-write* network-outbound process-exec (subpath "/") (remote ip "*:*") (remote unix-socket (subpath "/")) (local ip "*:*") (local unix-socket (subpath "/"))) ; why`,
		`(deny mach-lookup)`,
		`(deny default)`,
		`(deny file-read* (subpath "/x"))`,
		`(allow file-read*)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FilterDenies (-want +got):\n%s", diff)
	}
	if strings.Contains(got[0], `(subpath "/") (subpath "/")`) {
		t.Error("a filter repeated for each operation it serves")
	}
}
