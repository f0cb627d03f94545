package cage_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// The package documentation's Linux example, run for real: its code is
// the documentation's (TestPackageDocLinuxExample), with log.Fatal for
// return err, then what it wrote and a refused write outside the tree.
func Example_linux() {
	ctx := context.Background()
	// doc begin
	build, err := os.MkdirTemp("", "build") // the run's writable tree
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(build)
	policy, err := profile.New(profile.BaseV1, profile.ReadWrite(build),
		profile.Waive(profile.TrustHandoff)) // git hooks in build are writable
	if err != nil {
		log.Fatal(err)
	}
	c, err := cage.New(policy) // the Landlock ruleset and seccomp filter: c.Plan(), c.LinuxPlan()
	if err != nil {
		log.Fatal(err)
	}
	err = c.Command(ctx, "/bin/sh", "-c", `echo hi > "$1/out"`, "sh", build).Run()
	// doc end
	if err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(build + "/out")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(b))
	// Outside the writable tree (in a directory the caller may write),
	// the same shell is refused.
	other, err := os.MkdirTemp("", "other")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(other)
	err = c.Command(ctx, "/bin/sh", "-c", `echo hi > "$1/out"`, "sh", other).Run()
	_, statErr := os.Stat(other + "/out")
	fmt.Println(err != nil, os.IsNotExist(statErr))
	// Output:
	// hi
	// true true
}

// TestPackageDocLinuxExample: the package documentation's Linux example
// is Example_linux's code between its markers (return err there,
// log.Fatal here).
func TestPackageDocLinuxExample(t *testing.T) {
	docHolds(t, "example_linux_test.go", func(line string) string { return strings.Replace(line, "log.Fatal(err)", "return err", 1) })

}
