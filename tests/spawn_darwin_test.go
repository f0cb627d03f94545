package tests

// Spawn tests only macOS has; the shared ones are in spawn_unix_test.go.

import (
	"strings"
	"testing"

	"github.com/procage-go/procage/profile"
)

// TestExecTargetOnly: the target runs, and cannot execute anything else.
// bash, not sh: /bin/sh is a shim that executes the shell
// /private/var/select/sh names, which would itself be another program.
// (Linux refuses ExecTargetOnly as a gap: TestLinuxGapsRefusedAtNew.)
func TestExecTargetOnly(t *testing.T) {
	requireCage(t)
	c := newCage(t, policy(t, profile.ExecTargetOnly()))
	o, e, err := run(t, c, "/bin/bash", "-c", "echo builtin")
	if err != nil || strings.TrimSpace(o) != "builtin" {
		t.Fatalf("the target itself: %v, stdout %q, stderr %q", err, o, e)
	}
	o, e, err = run(t, c, "/bin/bash", "-c", "/bin/echo other")
	mustRefuse(t, "executing a program other than the target", o, e, err)
}
