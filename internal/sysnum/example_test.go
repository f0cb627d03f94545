package sysnum_test

import (
	"fmt"

	"github.com/procage-go/procage/internal/sysnum"
)

func Example() {
	amd := sysnum.AMD64.Nums["openat"]
	arm := sysnum.ARM64.Nums["openat"]
	_, fork := sysnum.ARM64.Nums["fork"]
	fmt.Println(amd, arm, fork)
	// Output: 257 56 false
}
