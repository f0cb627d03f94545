package linux_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// Lower a policy and print its plan: here the parts the policy added to
// the Linux Base V1 (fmt.Print(pl) shows all of it).
func Example() {
	policy, err := profile.New(profile.BaseV1, profile.Read("/srv/data"),
		profile.Network(profile.NetworkLoopback, 8080))
	if err != nil {
		log.Fatal(err)
	}
	pl, err := linux.Lower(policy, linux.Env{Env: profile.Env{Home: "/home/me"}, Accept: []profile.Gap{profile.GapLoopback}})
	if err != nil {
		log.Fatal(err) // a *profile.GapError names each part Linux cannot enforce
	}
	fmt.Println("Landlock ABI", pl.MinABI, "or newer")
	for _, r := range pl.Rules {
		if r.Layer == linux.LayerPolicy {
			fmt.Printf("path %s: %s\n", r.Path, r.Access)
		}
	}
	for _, r := range pl.NetRules {
		fmt.Printf("tcp port %d: %s\n", r.Port, r.Access)
	}
	for _, g := range pl.Accepted {
		fmt.Println("not enforced:", g.Gap)
	}
	// Output:
	// Landlock ABI 6 or newer
	// path /srv/data: read_file|read_dir
	// tcp port 8080: bind_tcp|connect_tcp
	// not enforced: network-loopback
}

// A policy part Linux cannot enforce is refused by name unless accepted.
func ExampleLower_gap() {
	policy, err := profile.New(profile.BaseV1, profile.Read("/home/me"))
	if err != nil {
		log.Fatal(err)
	}
	_, err = linux.Lower(policy, linux.Env{Env: profile.Env{Home: "/home/me"}})
	if ge, ok := errors.AsType[*profile.GapError](err); ok {
		for _, p := range ge.Parts {
			fmt.Println(p.Gap, p.Path)
		}
	}
	// Output:
	// secrets-inside-allowed-tree /home/me
}

// Decide says what a plan does with one access, and which rule decides:
// procage explain --backend linux.
func ExamplePlan_Decide() {
	policy, err := profile.New(profile.BaseV1, profile.Read("/srv/data"))
	if err != nil {
		log.Fatal(err)
	}
	pl, err := linux.Lower(policy, linux.Env{Env: profile.Env{Home: "/home/me"}})
	if err != nil {
		log.Fatal(err)
	}
	for _, words := range [][2]string{
		{"read", "/srv/data/report.csv"},
		{"write", "/srv/data/report.csv"},
		{"clone", "CLONE_NEWUSER"},
	} {
		a, err := linux.ParseAccess(words[0], words[1])
		if err != nil {
			log.Fatal(err)
		}
		d, err := pl.Decide(a)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(d)
	}
	// Output:
	// allowed: read_file on /srv/data/report.csv by Landlock rule (policy) /srv/data: read_file|read_dir
	// denied (EACCES): no Landlock rule grants write_file on /srv/data/report.csv; nearest rule (policy) /srv/data: read_file|read_dir
	// denied (EPERM) by seccomp rule clone if arg0&0x7e020000 != 0 -> EPERM (no new namespaces)
}
