//go:build darwin || linux

package tests

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// Helpers the macOS and Linux cage tests share.

// helperEnv names the helper a re-executed test binary runs instead of the
// tests (the os/exec TestMain pattern).
const helperEnv = "PROCAGE_TESTS_HELPER"

func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		os.Exit(runHelper(name))
	}
	os.Exit(m.Run())
}

func runHelper(name string) int {
	if name == "fds" {
		// Print every open descriptor above stderr (fcntl F_GETFD only, so
		// nothing here needs a rule).
		var open []string
		for fd := 3; fd < 4096; fd++ {
			if _, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0); e == 0 {
				open = append(open, fmt.Sprint(fd))
			}
		}
		fmt.Println(strings.Join(open, " "))
		return 0
	}
	if code, ok := osHelper(name); ok {
		return code
	}
	fmt.Fprintln(os.Stderr, "unknown helper", name)
	return 2
}

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
