package cage_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// The package documentation's Linux example, run for real.
func Example_linux() {
	if err := os.MkdirAll("/tmp/build", 0o755); err != nil {
		log.Fatal(err)
	}
	policy, err := profile.New(profile.BaseV1, profile.ReadWrite("/tmp/build"),
		profile.Waive(profile.TrustHandoff)) // git hooks in /tmp/build are writable
	if err != nil {
		log.Fatal(err)
	}
	c, err := cage.New(policy)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Command(ctx, "/bin/sh", "-c", "echo hi > /tmp/build/out").Run(); err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile("/tmp/build/out")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(b))
	// Outside the writable tree, the same shell is refused.
	err = c.Command(ctx, "/bin/sh", "-c", "echo hi > /tmp/out").Run()
	fmt.Println(err != nil)
	// Output:
	// hi
	// true
}
