package pathresolve_test

import (
	"fmt"

	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/pathresolve/macfs"
)

func Example() {
	fsys := macfs.NewMacOS() // a simulated macOS file system
	r := pathresolve.New(fsys, pathresolve.WithFirmlinks(fsys.Firmlinks()))
	for _, p := range []string{"/tmp/build/out.log", "/System/Volumes/Data/Users/me"} {
		res, err := r.Resolve(p)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s -> %s (exists %v, case-sensitive %v)\n", res.Input, res.Path, res.Exists, res.CaseSensitive)
		for _, w := range res.Rewrites {
			fmt.Printf("  %s: %s -> %s via %s\n", w.Reason, w.From, w.To, w.Via)
		}
		fmt.Println("  links:", res.Links)
	}
	// Output:
	// /tmp/build/out.log -> /private/tmp/build/out.log (exists false, case-sensitive false)
	//   symlink: /tmp/build/out.log -> /private/tmp/build/out.log via /tmp
	//   links: [/tmp]
	// /System/Volumes/Data/Users/me -> /Users/me (exists true, case-sensitive false)
	//   firmlink: /System/Volumes/Data/Users/me -> /Users/me via /Users
	//   links: []
}

func ExampleCheckAbs() {
	fmt.Println(pathresolve.CheckAbs("/Users/me/../other"))
	// Output:
	// pathresolve: "/Users/me/../other": at "/Users/me/..": path is not normalised
}
