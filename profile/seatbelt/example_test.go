package seatbelt_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
)

func ExampleLower() {
	p, _ := profile.New(profile.BaseV1, profile.ReadWrite("/tmp/work"))
	plan, err := seatbelt.Lower(p, profile.Env{
		Resolved: map[string]string{"/tmp/work": "/private/tmp/work"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(plan.Text(), "\n") {
		if strings.Contains(line, "/private/tmp/work") || strings.HasPrefix(line, "(version") || line == "(deny default)" {
			fmt.Println(line)
		}
	}
	// Output:
	// (version 1)
	// (deny default)
	// (allow file-read* file-write* (subpath "/private/tmp/work"))
}

func ExampleLowerLimit() {
	p, _ := profile.New(profile.BaseV1, profile.Read("/usr/share"))
	_, err := seatbelt.LowerLimit(p, profile.Env{}, 10)
	var le *seatbelt.LimitError
	if errors.As(err, &le) {
		fmt.Println("over the limit of", le.Limit)
	}
	// Output:
	// over the limit of 10
}
