package seatbelt_test

import (
	"errors"
	"testing"

	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/seatbelt"
)

// TestLowerLimitBoundary: a profile of exactly limit rules is accepted and
// one rule more is refused, so an off-by-one in the comparison (>= for >,
// or a limit+1 slack) fails here rather than far from the boundary.
func TestLowerLimitBoundary(t *testing.T) {
	p, err := profile.New(profile.BaseV1, profile.Read("/data/a"), profile.ReadWrite("/data/b"))
	if err != nil {
		t.Fatal(err)
	}
	env := profile.Env{Home: "/Users/me"}
	plan, err := seatbelt.LowerLimit(p, env, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	n := plan.NumRules()

	if got, err := seatbelt.LowerLimit(p, env, n); err != nil {
		t.Errorf("LowerLimit with limit %d, the profile's own size: %v; want it accepted", n, err)
	} else if got.NumRules() != n {
		t.Errorf("LowerLimit with limit %d made %d rules, want %d", n, got.NumRules(), n)
	}

	_, err = seatbelt.LowerLimit(p, env, n-1)
	var le *seatbelt.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("LowerLimit of %d rules with limit %d: %v, want a *LimitError", n, n-1, err)
	}
	if le.Rules != n || le.Limit != n-1 {
		t.Errorf("LimitError = %+v, want {Rules: %d, Limit: %d}", *le, n, n-1)
	}
}
