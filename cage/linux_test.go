package cage_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// The Linux plan is portable: these run on every OS.

func linuxCage(t *testing.T, opts []profile.Option, copts ...cage.Option) (*cage.Cage, error) {
	t.Helper()
	pol, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return cage.New(pol, append([]cage.Option{cage.WithBackend(cage.BackendLinux), cage.WithHome("/home/u")}, copts...)...)
}

func TestLinuxPlanGapRefusedAndAccepted(t *testing.T) {
	_, err := linuxCage(t, []profile.Option{profile.Read("/home/u"), profile.Network(profile.NetworkLoopback, profile.AnyPort)})
	var ge *profile.GapError
	if !errors.As(err, &ge) || !ge.Has(profile.GapSecrets) || !ge.Has(profile.GapLoopback) || ge.Has(profile.GapMach) {
		t.Fatalf("New = %v, want a GapError naming secrets and loopback only", err)
	}
	c, err := linuxCage(t, []profile.Option{profile.Read("/home/u"), profile.Network(profile.NetworkLoopback, profile.AnyPort)},
		cage.AcceptGaps(profile.GapSecrets, profile.GapLoopback))
	if err != nil {
		skipIfTooOld(t, err) // on Linux the host's backend: New enforces
		t.Fatal(err)
	}
	if c.Backend() != cage.BackendLinux || c.LinuxPlan() == nil || c.SeatbeltPlan() != nil {
		t.Errorf("backend %s, LinuxPlan %v, SeatbeltPlan %v", c.Backend(), c.LinuxPlan(), c.SeatbeltPlan())
	}
	for _, want := range []string{"ACCEPTED GAP (not enforced) secrets-inside-allowed-tree", "ACCEPTED GAP (not enforced) network-loopback", "path policy   /home/u: read_file|read_dir"} {
		if !strings.Contains(c.Plan(), want) {
			t.Errorf("plan lacks %q:\n%s", want, c.Plan())
		}
	}
	b, err := json.Marshal(c.LinuxPlan())
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Accepted []struct {
			Gap       string
			Path      string
			Protected []string
		} `json:"accepted_gaps"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	gaps := map[string]int{}
	for _, a := range j.Accepted {
		gaps[a.Gap]++
		if a.Gap == string(profile.GapSecrets) && (a.Path != "/home/u" || !slices.Contains(a.Protected, "/home/u/.ssh") || !slices.Contains(a.Protected, "/home/u/.config/gh")) {
			t.Errorf("secrets part names %q inside %q, want ~/.ssh and ~/.config/gh inside /home/u", a.Protected, a.Path)
		}
	}
	// One part for the secrets paths inside /home/u, one for loopback.
	if len(gaps) != 2 || gaps[string(profile.GapSecrets)] != 1 || gaps[string(profile.GapLoopback)] != 1 {
		t.Errorf("JSON accepted gaps: %v", gaps)
	}
}

func TestAcceptGapsUnknown(t *testing.T) {
	if _, err := linuxCage(t, nil, cage.AcceptGaps("no-such-gap")); err == nil {
		t.Error("AcceptGaps(no-such-gap) accepted")
	}
}

// A macOS cage ignores accepted Linux gaps and has no Linux plan.
func TestAcceptGapsMacOS(t *testing.T) {
	pol, err := profile.New(profile.BaseV1, profile.Network(profile.NetworkLoopback, profile.AnyPort))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cage.New(pol, cage.WithBackend(cage.BackendMacOS), cage.WithHome("/home/u"), cage.AcceptGaps(profile.GapLoopback))
	if err != nil {
		t.Fatal(err)
	}
	if c.LinuxPlan() != nil {
		t.Error("a macOS cage has a Linux plan")
	}
}
