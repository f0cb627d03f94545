package sbpl_test

import (
	"fmt"
	"log"

	"github.com/procage-go/procage/profile/sbpl"
)

// The package documentation's example.
func Example() {
	prof := &sbpl.Profile{Version: 1, Rules: []sbpl.Rule{
		{Effect: sbpl.Deny, Ops: []string{"default"}},
		{Effect: sbpl.Allow, Ops: []string{"file-read*"}, Filters: []*sbpl.Filter{sbpl.Subpath("/usr/lib")}},
	}}
	text, err := prof.Text()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(text)
	// Output:
	// (version 1)
	// (deny default)
	// (allow file-read* (subpath "/usr/lib"))
}
