package tests

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/procage-go/procage/internal/testenv"
)

// TestLinuxTerminalSpawn: a command whose stdio is a terminal runs under
// the default policy, with no class waived and no gap accepted: the
// spawn's grant of its own terminal is a file grant, not a writable tree
// that could hold git hooks (it once failed with
// trust-handoff-inside-writable-tree).
func TestLinuxTerminalSpawn(t *testing.T) {
	requireCage(t)
	master, slave := testenv.OpenPTY(t)
	c := newCage(t, policy(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.Command(ctx, "/bin/echo", "hi from the cage")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	if err := cmd.Run(); err != nil {
		t.Fatalf("echo on a terminal: %v", err)
	}
	line, err := bufio.NewReader(master).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "hi from the cage" {
		t.Errorf("terminal read %q, %v", line, err)
	}
}
