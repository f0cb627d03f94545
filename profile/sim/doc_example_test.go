package sim_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/sim"
)

// The package documentation's example: the secrets class denies a read of
// ~/.ssh/id_rsa although the policy allows nothing there anyway.
func Example() {
	p, _ := profile.New(profile.BaseV1, profile.Read("/Users/me/src"))
	d, err := sim.Explain(p, profile.Env{Home: "/Users/me"}, "file-read-data", "/Users/me/.ssh/id_rsa")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Allowed, d.Layer, strings.Contains(d.Text, `(subpath "/Users/me/.ssh")`))
	fmt.Println(strings.HasPrefix(d.String(), "denied by rule "), strings.Contains(d.String(), "(hard-deny): (deny file-read* file-write* "))
	// Output:
	// false hard-deny true
	// true true
}
