package cage_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// TestSpawnRefusedForOtherBackend: a cage planned for another OS's backend
// plans, and every way to start it refuses; nothing runs.
func TestSpawnRefusedForOtherBackend(t *testing.T) {
	other := cage.BackendMacOS
	if cage.HostBackend() == cage.BackendMacOS {
		other = cage.BackendLinux
	}
	c, err := cage.New(mustPolicy(t, profile.Fork()), cage.WithBackend(other), cage.WithSandboxCheck(func() (bool, error) { return false, nil }))
	if err != nil {
		t.Fatalf("New for %s on %s (plan only): %v", other, runtime.GOOS, err)
	}
	if c.Backend() != other || c.Plan() == "" {
		t.Fatalf("Backend() = %v, Plan() %q; want %v and a plan", c.Backend(), c.Plan(), other)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	runs := map[string]func(cmd *cage.Cmd) error{
		"Run":            func(cmd *cage.Cmd) error { return cmd.Run() },
		"Start":          func(cmd *cage.Cmd) error { return cmd.Start() },
		"Output":         func(cmd *cage.Cmd) error { _, err := cmd.Output(); return err },
		"CombinedOutput": func(cmd *cage.Cmd) error { _, err := cmd.CombinedOutput(); return err },
	}
	for name, run := range runs {
		cmd := c.Command(t.Context(), "/bin/sh", "-c", "echo x > "+marker)
		err := run(cmd)
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: got %v, want errors.ErrUnsupported", name, err)
		}
		var ue *cage.UnsupportedError
		if !errors.As(err, &ue) || ue.OSBuild != runtime.GOOS {
			t.Errorf("%s: got %v, want *UnsupportedError naming %s", name, err, runtime.GOOS)
		}
		if cmd.Process != nil {
			t.Errorf("%s: Process set after a refused start", name)
		}
		if err := cmd.Wait(); err == nil {
			t.Errorf("%s: Wait after a refused start returned nil", name)
		}
	}
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the target ran: marker file stat: %v", err)
	}
}
