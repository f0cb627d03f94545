//go:build darwin || linux

package tests

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// A refusal inside the cage proves something only if the same command
// works outside it: these control runs rule out "failed for another
// reason" (a missing domain, a tool that fails on the runner).

// mustWorkOutside runs argv outside any cage and fails the test if it does
// not succeed.
func mustWorkOutside(tb testing.TB, argv ...string) {
	tb.Helper()
	if out, err := outside(argv...); err != nil {
		tb.Fatalf("control run outside the cage failed, so a refusal inside would prove nothing: %q: %v: %.300s", argv, err, out)
	}
}

func outside(argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	return string(out), err
}
