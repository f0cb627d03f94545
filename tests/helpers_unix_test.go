//go:build darwin || linux

package tests

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// Helpers the macOS and Linux cage tests share.

func newCage(tb testing.TB, pol profile.Policy, opts ...cage.Option) *cage.Cage {
	tb.Helper()
	c, err := cage.New(pol, opts...)
	if err != nil {
		tb.Fatalf("cage.New: %v", err)
	}
	return c
}

func policy(tb testing.TB, opts ...profile.Option) profile.Policy {
	tb.Helper()
	p, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// run runs name in c and returns stdout and stderr.
func run(tb testing.TB, c *cage.Cage, name string, args ...string) (string, string, error) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.Command(ctx, name, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}
