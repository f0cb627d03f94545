package cage_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
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
	// Tier T2: no mounts hide the stores inside the home directory.
	_, err := linuxCage(t, []profile.Option{profile.Read("/home/u"), profile.Network(profile.NetworkLoopback, profile.AnyPort)}, cage.WithLinuxTier(cage.TierT2))
	var ge *profile.GapError
	if !errors.As(err, &ge) || !ge.Has(profile.GapSecrets) || !ge.Has(profile.GapLoopback) || ge.Has(profile.GapMach) {
		t.Fatalf("New = %v, want a GapError naming secrets and loopback only", err)
	}
	c, err := linuxCage(t, []profile.Option{profile.Read("/home/u"), profile.Network(profile.NetworkLoopback, profile.AnyPort)},
		cage.AcceptGaps(profile.GapSecrets, profile.GapLoopback), cage.WithLinuxTier(cage.TierT2))
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

// TestPlanOnlyRefusedGaps: a PlanOnly cage shows a plan with gaps it does
// not accept, each listed as refused, and starting it refuses with the
// error New would have returned; nothing runs.
func TestPlanOnlyRefusedGaps(t *testing.T) {
	opts := []profile.Option{profile.Read("/home/u"), profile.Network(profile.NetworkLoopback, 8080)}
	c, err := linuxCage(t, opts, cage.PlanOnly(), cage.AcceptGaps(profile.GapLoopback), cage.WithLinuxTier(cage.TierT2))
	if err != nil {
		t.Fatalf("PlanOnly New: %v", err)
	}
	pl := c.LinuxPlan()
	if pl == nil || len(pl.Refused) != 1 || pl.Refused[0].Gap != profile.GapSecrets || len(pl.Accepted) != 1 || pl.Accepted[0].Gap != profile.GapLoopback {
		t.Fatalf("plan refused %v, accepted %v; want secrets refused, loopback accepted", pl.Refused, pl.Accepted)
	}
	for _, want := range []string{"REFUSED GAP (not accepted) secrets-inside-allowed-tree: ", "ACCEPTED GAP (not enforced) network-loopback: ", "path policy   /home/u: read_file|read_dir"} {
		if !strings.Contains(c.Plan(), want) {
			t.Errorf("plan lacks %q:\n%s", want, c.Plan())
		}
	}
	err = c.Command(t.Context(), "/bin/true").Run()
	if pe, ok := errors.AsType[*cage.PolicyError](err); !ok || !errors.Is(err, cage.ErrGap) || len(pe.Gaps) != 1 || pe.Gaps[0].Gap != profile.GapSecrets {
		t.Errorf("Run of a PlanOnly cage with a refused gap = %v, want the ErrGap refusal", err)
	}

	// Without gaps, a PlanOnly cage plans and refuses to start.
	c, err = linuxCage(t, []profile.Option{profile.Read("/usr/share")}, cage.PlanOnly())
	if err != nil || len(c.LinuxPlan().Refused) != 0 {
		t.Fatalf("PlanOnly New: %v", err)
	}
	if err := c.Command(t.Context(), "/bin/true").Run(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Run of a PlanOnly cage = %v, want errors.ErrUnsupported", err)
	}
}

// TestPolicyGapsAndHome: the gaps and the home directory a policy names
// (a saved policy's accept_gaps and home) are honoured as the options are;
// WithHome still overrides the policy's home.
func TestPolicyGapsAndHome(t *testing.T) {
	pol, err := profile.New(profile.BaseV1, profile.ReadWrite("/srv/w"), profile.Network(profile.NetworkLoopback, 8080),
		profile.AcceptGaps(profile.GapLoopback, profile.GapTrustHandoff), profile.Home("/home/saved"))
	if err != nil {
		t.Fatal(err)
	}
	// PlanOnly: this is about the plan, on any kernel (an enforcing cage
	// needs Landlock ABI 6); T2, where loopback mode is a gap.
	c, err := cage.New(pol, cage.WithBackend(cage.BackendLinux), cage.PlanOnly(), cage.WithLinuxTier(cage.TierT2))
	if err != nil {
		t.Fatalf("New with the policy's accepted gaps: %v", err)
	}
	if c.Home() != "/home/saved" || len(c.LinuxPlan().Accepted) != 2 {
		t.Errorf("Home() = %q, accepted %v; want the policy's home and both gaps", c.Home(), c.LinuxPlan().Accepted)
	}
	c, err = cage.New(pol, cage.WithBackend(cage.BackendLinux), cage.PlanOnly(), cage.WithLinuxTier(cage.TierT2), cage.WithHome("/home/opt"))
	if err != nil || c.Home() != "/home/opt" {
		t.Errorf("WithHome over the policy's home: %v, %q", err, c.Home())
	}
}

// TestT1PlanHidesStores: at tier T1 a home read is no gap (each protected
// store that exists is covered by an empty read-only mount, listed in the
// plan), a writable tree refuses trust handoff by name unless the
// new-names supervisor runs here (always at T2), and the plan's header
// names the tier.
func TestT1PlanHidesStores(t *testing.T) {
	requireUserNamespace(t)
	c, err := linuxCage(t, []profile.Option{profile.Read("/home/u")}, cage.PlanOnly(), cage.WithLinuxTier(cage.TierT1))
	if err != nil {
		t.Fatalf("T1 home read: %v", err)
	}
	for _, want := range []string{"; tier T1 (", "\nmount read-only /: ", "\nmount hide      /home/u/.ssh: "} {
		if !strings.Contains(c.Plan(), want) {
			t.Errorf("plan lacks %q:\n%s", want, c.Plan())
		}
	}
	if pl := c.LinuxPlan(); len(pl.Refused) != 0 || pl.Tier != linux.TierT1 {
		t.Errorf("T1 home read: tier %v, refused %v", pl.Tier, pl.Refused)
	}
	c, err = linuxCage(t, []profile.Option{profile.ReadWrite("/home/u/src")}, cage.PlanOnly(), cage.WithLinuxTier(cage.TierT1))
	if err != nil {
		t.Fatal(err)
	}
	// The new-names supervisor closes it where the probe finds it works.
	switch pl := c.LinuxPlan(); {
	case cage.Probe().NewNames == nil && (len(pl.Refused) != 0 || !pl.NewNames):
		t.Errorf("T1 writable tree with the new-names supervisor: refused %v, NewNames %v; want nothing refused", pl.Refused, pl.NewNames)
	case cage.Probe().NewNames != nil && (len(pl.Refused) != 1 || pl.Refused[0].Gap != profile.GapTrustHandoff || pl.NewNames):
		t.Errorf("T1 writable tree without the new-names supervisor (%v): refused %v, want trust handoff alone", cage.Probe().NewNames, pl.Refused)
	}
	// At T2 it stays refused.
	c, err = linuxCage(t, []profile.Option{profile.ReadWrite("/home/u/src")}, cage.PlanOnly(), cage.WithLinuxTier(cage.TierT2))
	if err != nil {
		t.Fatal(err)
	}
	if pl := c.LinuxPlan(); len(pl.Refused) != 1 || pl.Refused[0].Gap != profile.GapTrustHandoff || pl.NewNames {
		t.Errorf("T2 writable tree refused %v (NewNames %v), want trust handoff alone", pl.Refused, pl.NewNames)
	}
}
