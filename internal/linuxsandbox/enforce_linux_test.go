package linuxsandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
	"github.com/procage-go/procage/profile/linux"
)

// needPlan skips, naming what needs a newer ABI, when this kernel's
// Landlock ABI is older than pl needs (BuildRuleset would refuse it).
func needPlan(t *testing.T, pl *linux.Plan) {
	t.Helper()
	have := KernelABI()
	if have >= pl.MinABI {
		return
	}
	// The plan's text lists its needs, one "needs ABI n: what" line each.
	var why []string
	for _, line := range strings.Split(pl.String(), "\n") {
		var n int
		if _, err := fmt.Sscanf(line, "needs ABI %d:", &n); err == nil && n > have {
			why = append(why, strings.TrimPrefix(line, "needs "))
		}
	}
	testenv.SkipLandlockABI(t, have, pl.MinABI, strings.Join(why, "; "))
}

// evalSpell spells a rule's path as the kernel reaches it (the base's
// /bin is a link on merged-/usr systems); the cage resolves and checks
// links with pathresolve instead.
func evalSpell(r linux.PathRule) (string, error) {
	p, err := filepath.EvalSymlinks(r.Path)
	if errors.Is(err, os.ErrNotExist) {
		return r.Path, nil
	}
	return p, err
}

// hold opens rules for BuildRuleset.
func hold(t *testing.T, rules []linux.PathRule) *Handles {
	t.Helper()
	h, err := OpenRules(rules, evalSpell)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// spawn runs argv under pl with extra rules and returns its output and
// exit status; err is Start's error.
func spawn(t *testing.T, pl *linux.Plan, rules []linux.PathRule, argv ...string) (string, syscall.WaitStatus, error) {
	t.Helper()
	return spawnHeld(t, pl, hold(t, rules), rules, argv...)
}

// spawnHeld is spawn with the ruleset built from held handles; rules are
// what the child's calls check (listing).
func spawnHeld(t *testing.T, pl *linux.Plan, held *Handles, rules []linux.PathRule, argv ...string) (string, syscall.WaitStatus, error) {
	t.Helper()
	rs, err := BuildRuleset(pl, held)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	prog, err := BuildProgram(pl)
	if err != nil {
		t.Fatal(err)
	}
	calls, err := NewCalls(pl, rs, prog, rules)
	if err != nil {
		t.Fatal(err)
	}
	return spawnCalls(t, calls, argv...)
}

func spawnCalls(t *testing.T, calls *Calls, argv ...string) (string, syscall.WaitStatus, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pid, err := forkexec.Start(&forkexec.Attr{
		Path: argv[0], Args: argv, Env: []string{"PATH=/usr/bin:/bin", "LC_ALL=C"},
		Files: []uintptr{0, w.Fd(), w.Fd()}, Calls: calls.Calls,
	})
	calls.KeepAlive()
	w.Close()
	if err != nil {
		return "", 0, err
	}
	out, _ := io.ReadAll(r)
	ws, werr := forkexec.Wait(pid)
	if werr != nil {
		t.Fatal(werr)
	}
	return string(out), ws, nil
}

func lower(t *testing.T, opts ...profile.Option) *linux.Plan {
	t.Helper()
	pol, err := profile.New(profile.BaseV1, opts...)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := linux.Lower(pol, linux.Env{Env: profile.Env{Home: "/nonexistent-home"}, ABI: KernelABI()})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

func TestEnforceBase(t *testing.T) {
	pl := lower(t, profile.Fork(), profile.Waive(profile.TrustHandoff)) // the write grant below
	needPlan(t, pl)
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, ws, err := spawn(t, pl, pl.Rules, "/bin/sh", "-c", "echo hello; cat "+secret+"; echo x > "+dir+"/new; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	if ws.ExitStatus() != 3 || !strings.HasPrefix(out, "hello\n") || strings.Contains(out, "s3cret") {
		t.Errorf("status %d, output %q", ws.ExitStatus(), out)
	}
	if strings.Count(out, "Permission denied") != 2 {
		t.Errorf("want two Permission denied errors, got %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the child created a file outside its rules: %v", err)
	}

	// With the directory granted for writing, the same script works.
	rules, err := pl.WithSpawn([]linux.SpawnGrant{{Path: dir, Write: true, Dir: true}}, "")
	if err != nil {
		t.Fatal(err)
	}
	out, ws, err = spawn(t, pl, rules, "/bin/sh", "-c", "cat "+secret+"; echo x > "+dir+"/new")
	if err != nil || ws.ExitStatus() != 0 || out != "s3cret" {
		t.Errorf("with a grant: %v, status %d, output %q", err, ws.ExitStatus(), out)
	}
}

// TestDenyEverythingRefusesExec is the probe's shape: a ruleset with no
// rule at all makes the exec fail with EACCES; the target never runs.
// Base V1's plan without its rules needs a recent ABI; DenyAll, the
// probe's own plan, runs on every Landlock kernel.
func TestDenyEverythingRefusesExec(t *testing.T) {
	for name, plan := range map[string]func(t *testing.T) *linux.Plan{
		"base-v1":  func(t *testing.T) *linux.Plan { return lower(t) },
		"deny-all": func(*testing.T) *linux.Plan { return linux.DenyAll(KernelABI()) },
	} {
		t.Run(name, func(t *testing.T) {
			testenv.RequireLandlockABI(t, 1, "a Landlock ruleset")
			pl := plan(t)
			needPlan(t, pl)
			_, _, err := spawn(t, pl, nil, "/bin/true")
			var se *forkexec.StepError
			if !errors.As(err, &se) || se.Step != forkexec.StepExec || se.Err != syscall.EACCES {
				t.Fatalf("Start = %v, want an exec step error with EACCES", err)
			}
		})
	}
}

// TestStepNames: a failing child call is named, under Base V1's plan and
// under DenyAll (which runs on every Landlock kernel).
func TestStepNames(t *testing.T) {
	for name, plan := range map[string]func(t *testing.T) *linux.Plan{
		"base-v1":  func(t *testing.T) *linux.Plan { return lower(t) },
		"deny-all": func(*testing.T) *linux.Plan { return linux.DenyAll(KernelABI()) },
	} {
		t.Run(name, func(t *testing.T) {
			testenv.RequireLandlockABI(t, 1, "a Landlock ruleset")
			pl := plan(t)
			needPlan(t, pl)
			rs, err := BuildRuleset(pl, hold(t, pl.Rules))
			if err != nil {
				t.Fatal(err)
			}
			prog, err := BuildProgram(pl)
			if err != nil {
				t.Fatal(err)
			}
			calls, err := NewCalls(pl, rs, prog, pl.Rules)
			if err != nil {
				t.Fatal(err)
			}
			// The child's landlock_restrict_self now gets EBADF, or EBADFD if
			// the number was reused by another kind of file.
			rs.Close()
			_, _, err = spawnCalls(t, calls, "/bin/true")
			var se *forkexec.StepError
			if !errors.As(err, &se) || se.Step != forkexec.StepApply || (se.Err != syscall.EBADF && se.Err != syscall.EBADFD) {
				t.Fatalf("Start = %v, want an apply step error with EBADF", err)
			}
			if got := calls.Name(se.Step, se.Call); got != "landlock_restrict_self" {
				t.Errorf("failing call named %q", got)
			}
		})
	}
}

func TestCheckABI(t *testing.T) {
	err := CheckABI(&linux.Plan{MinABI: 99})
	var ae *ABIError
	if !errors.As(err, &ae) || ae.Need != 99 || ae.Kernel == "" || !strings.Contains(err.Error(), ae.Kernel) {
		t.Errorf("CheckABI(99) = %v", err)
	}
}
