package profile_test

import (
	"errors"
	"testing"

	"github.com/procage-go/procage/profile"
)

// TestLowerLimitBoundary: a profile of exactly Limit rules is accepted and
// one rule more is refused, so an off-by-one in the comparison (>= for >,
// or a limit+1 slack) fails here rather than far from the boundary.
func TestLowerLimitBoundary(t *testing.T) {
	p, err := profile.New(profile.BaseV1, profile.Read("/data/a"), profile.ReadWrite("/data/b"))
	if err != nil {
		t.Fatal(err)
	}
	env := profile.Env{Home: "/Users/me", Limit: 1 << 20}
	plan, err := profile.Lower(p, env)
	if err != nil {
		t.Fatal(err)
	}
	n := plan.Rules()

	env.Limit = n
	if got, err := profile.Lower(p, env); err != nil {
		t.Errorf("Lower with Limit = %d, the profile's own size: %v; want it accepted", n, err)
	} else if got.Rules() != n {
		t.Errorf("Lower with Limit = %d made %d rules, want %d", n, got.Rules(), n)
	}

	env.Limit = n - 1
	_, err = profile.Lower(p, env)
	var le *profile.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("Lower of %d rules with Limit = %d: %v, want a *LimitError", n, n-1, err)
	}
	if le.Rules != n || le.Limit != n-1 {
		t.Errorf("LimitError = %+v, want {Rules: %d, Limit: %d}", *le, n, n-1)
	}
}
