package profile_test

import (
	"fmt"
	"strings"

	"github.com/procage-go/procage/profile"
)

func ExampleNew() {
	p, err := profile.New(profile.BaseV1,
		profile.Read("/usr/share"),
		profile.ReadWrite("/private/tmp/work"),
		profile.Network(profile.NetworkLoopback, 8080),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p)

	_, err = profile.New(profile.BaseV1, profile.Read("tmp/work"))
	fmt.Println(err)
	// Output:
	// {base v1; fs: read+write subpath /private/tmp/work, read subpath /usr/share; network loopback [8080]}
	// profile: fs "tmp/work": path is not absolute
}

func ExampleParseJSON() {
	p, err := profile.ParseJSON(strings.NewReader(`{"version":1,"base":"v1","fs":[{"access":["read"],"subpath":"/usr/share"}],"network":{"mode":"on"}}`))
	fmt.Println(p, err)
	_, err = profile.ParseJSON(strings.NewReader(`{"version":1,"base":"v1","netwrok":{}}`))
	fmt.Println(err)
	// Output:
	// {base v1; fs: read subpath /usr/share; network on} <nil>
	// profile: line 1, column 26: netwrok: unknown field
}
