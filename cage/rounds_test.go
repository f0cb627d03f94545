package cage_test

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/procage-go/procage/cage"
)

// TestJudgeRound: a process whose query failed otherwise than ESRCH is
// never taken as "not ours".
func TestJudgeRound(t *testing.T) {
	checks := []cage.ProcCheck{
		cage.NewProcCheck(10, true, nil),            // ours: kill
		cage.NewProcCheck(11, false, nil),           // not ours
		cage.NewProcCheck(12, false, syscall.ESRCH), // gone
		cage.NewProcCheck(13, false, syscall.EPERM), // unknown
		cage.NewProcCheck(14, true, syscall.EINVAL), // unknown, whatever ours says
		cage.NewProcCheck(15, true, nil),
	}
	kill, res := cage.JudgeRound(checks)
	if diff := cmp.Diff([]int{10, 15}, kill); diff != "" {
		t.Errorf("kill (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{13, 14}, res.Unchecked()); diff != "" {
		t.Errorf("unchecked (-want +got):\n%s", diff)
	}
	if res.Killed() != 2 {
		t.Errorf("killed = %d, want 2", res.Killed())
	}
}

func TestEndRounds(t *testing.T) {
	tests := []struct {
		name      string
		rounds    []cage.RoundResult
		wantCalls int
		notEnded  bool
		unchecked []int
	}{
		{name: "nothing found", rounds: []cage.RoundResult{cage.NewRoundResult(0, nil, nil)}, wantCalls: 1},
		{name: "killed then clear", rounds: []cage.RoundResult{cage.NewRoundResult(2, nil, nil), cage.NewRoundResult(1, nil, nil), cage.NewRoundResult(0, nil, nil)}, wantCalls: 3},
		{name: "transient query error then clear", rounds: []cage.RoundResult{cage.NewRoundResult(0, []int{7}, syscall.EAGAIN), cage.NewRoundResult(0, nil, nil)}, wantCalls: 2},
		{name: "always unchecked", rounds: []cage.RoundResult{cage.NewRoundResult(0, []int{7}, syscall.EPERM)}, wantCalls: 4, notEnded: true, unchecked: []int{7}},
		{name: "survivors", rounds: []cage.RoundResult{cage.NewRoundResult(1, nil, nil)}, wantCalls: 4, notEnded: true},
		{name: "survivors and unchecked", rounds: []cage.RoundResult{cage.NewRoundResult(1, []int{8}, syscall.EPERM)}, wantCalls: 4, notEnded: true, unchecked: []int{8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := cage.EndRounds(4, func() (cage.RoundResult, error) {
				r := tt.rounds[min(calls, len(tt.rounds)-1)]
				calls++
				return r, nil
			})
			if calls != tt.wantCalls {
				t.Errorf("%d rounds, want %d", calls, tt.wantCalls)
			}
			if got := errors.Is(err, cage.ErrRunNotEnded); got != tt.notEnded {
				t.Fatalf("err %v: ErrRunNotEnded %v, want %v", err, got, tt.notEnded)
			}
			const unchecked = "could not check processes"
			if tt.unchecked == nil {
				if err != nil && strings.Contains(err.Error(), unchecked) {
					t.Errorf("err %v names unchecked processes", err)
				}
				return
			}
			if want := unchecked + " " + fmt.Sprint(tt.unchecked[0]); err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, syscall.EPERM) {
				t.Errorf("err %v, want it to say %q and wrap its cause", err, want)
			}
		})
	}
	listErr := errors.New("cannot list")
	if err := cage.EndRounds(4, func() (cage.RoundResult, error) { return cage.RoundResult{}, listErr }); !errors.Is(err, listErr) {
		t.Errorf("a failed listing: %v, want it returned", err)
	}
}

// TestProbeResultOneSentence: a failed apply is named once; the run search
// it prevented says "not checked", and the same failure in both is not
// repeated.
func TestProbeResultOneSentence(t *testing.T) {
	apply := &cage.UnsupportedError{OSBuild: "linux", What: "no backend"}
	for _, p := range []cage.ProbeResult{
		{OSBuild: "linux", Apply: apply, RunSearch: cage.ErrNotChecked},
		{OSBuild: "linux", Apply: apply, RunSearch: &cage.UnsupportedError{OSBuild: "linux", What: "no backend"}},
	} {
		s := p.String()
		if n := countSub(s, apply.Error()); n != 1 {
			t.Errorf("String() = %q names the apply failure %d times, want once", s, n)
		}
		if !errors.Is(p.Err(), errors.ErrUnsupported) {
			t.Errorf("Err() = %v, want unsupported", p.Err())
		}
	}
	p := cage.ProbeResult{OSBuild: "linux", Apply: apply, RunSearch: cage.ErrNotChecked}
	if p.Err() != error(apply) {
		t.Errorf("Err() = %v, want the apply failure alone", p.Err())
	}
	if s := p.String(); s != "linux: apply FAILED ("+apply.Error()+"); run search not checked" {
		t.Errorf("String() = %q", s)
	}
	// Probe is declared once: on this host, it answers with the host's build.
	if got := cage.Probe(); got.OSBuild == "" || (got.Apply != nil && got.RunSearch == nil) {
		t.Errorf("Probe() = %+v: no build, or a failed apply with no run-query answer", got)
	}
}

func countSub(s, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			n++
		}
	}
	return n
}
