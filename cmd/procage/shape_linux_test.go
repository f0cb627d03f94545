package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/procage-go/procage/internal/testenv"
)

// enterHostShape puts procage, run as the test binary, in the host shape
// testenv's variables name.
func enterHostShape() error { return testenv.EnterHostShape() }

// procageIn runs procage as a separate process in a host shape: the
// seccomp shape named (testenv.HostShapes), or with masked set a
// container's masked /proc (testenv.MaskedProc).
func procageIn(t *testing.T, shape string, masked bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PROCAGE_TEST_MAIN=1", testenv.HostShapeEnv+"="+shape)
	if masked {
		testenv.MaskedProc(cmd, true)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	testenv.SkipNoUserNS(t, cmd, err)
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// probeJSON is procage probe --json's tier fields.
type probeJSON struct {
	OK            bool
	Tier          string
	T1            *string `json:"t1_unavailable"`
	Proc          *string `json:"t1_without_proc"`
	PolicyRefused *string `json:"default_policy_refused"`
}

func probeIn(t *testing.T, shape string, masked bool) (text string, j probeJSON) {
	t.Helper()
	code, text, errs := procageIn(t, shape, masked, "probe")
	if code != 0 || errs != "" {
		t.Fatalf("probe: exit %d, stdout %q, stderr %q", code, text, errs)
	}
	code, out, errs := procageIn(t, shape, masked, "probe", "--json")
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != 0 || errs != "" || !j.OK {
		t.Fatalf("probe --json: exit %d, %q (%v), stderr %q", code, out, err, errs)
	}
	if j.PolicyRefused != nil {
		testenv.Skip(t, testenv.ReasonLandlockABI, "the default policy is refused here: "+*j.PolicyRefused)
	}
	return text, j
}

// TestProbeFallbackShapes: procage probe, plan and run name the fallback
// a host gets, in a procage process under Docker's seccomp shape (T2: the
// unshare refused), the later-step shape (unshare ok, the mounts refused
// with EACCES; the shape Ubuntu's AppArmor restriction gives, not
// AppArmor itself) and a container's masked /proc (T1 without /proc).
func TestProbeFallbackShapes(t *testing.T) {
	for _, tc := range []struct {
		shape, step, call string
		errno             syscall.Errno
	}{
		{"docker", "namespace", "unshare", syscall.EPERM},
		{"userns-mount-eacces", "namespace", "mount propagation private", syscall.EACCES},
	} {
		t.Run(tc.shape, func(t *testing.T) {
			if tc.shape != "docker" {
				testenv.RequireUserNamespace(t)
			}
			why := tc.step + " step " + tc.call + ": " + tc.errno.Error()
			text, j := probeIn(t, tc.shape, false)
			if !strings.Contains(text, "; tier T2 (T1 unavailable: "+why+")") {
				t.Errorf("probe: %q; want tier T2 naming %s", text, why)
			}
			if j.Tier != "T2" || j.T1 == nil || !strings.Contains(*j.T1, tc.call) || !strings.Contains(*j.T1, tc.errno.Error()) || j.Proc != nil {
				t.Errorf("probe --json: %+v; want tier T2, t1_unavailable naming %s", j, why)
			}
			code, out, errs := procageIn(t, tc.shape, false, "plan")
			if first, _, _ := strings.Cut(out, "\n"); code != 0 || !strings.Contains(first, "; tier T2 (") {
				t.Errorf("plan: exit %d, first line %q, stderr %q; want tier T2", code, first, errs)
			}
			// TierAuto runs at T2: the caller's pid namespace, so sh is not pid 2.
			code, out, errs = procageIn(t, tc.shape, false, "run", "--", "/bin/sh", "-c", "echo $$")
			if code != 0 || strings.TrimSpace(out) == "2" || strings.TrimSpace(out) == "" {
				t.Errorf("run at auto: exit %d, stdout %q, stderr %q; want a T2 run", code, out, errs)
			}
			code, out, errs = procageIn(t, tc.shape, false, "run", "--tier", "t1", "--", "/bin/true")
			if code != exitFailure || out != "" || !strings.Contains(errs, tc.call) || !strings.Contains(errs, tc.errno.Error()) {
				t.Errorf("run --tier t1: exit %d, stdout %q, stderr %q; want %d naming %s", code, out, errs, exitFailure, why)
			}
		})
	}
	t.Run("masked-proc", func(t *testing.T) {
		text, j := probeIn(t, "", true)
		why := "pidns step mount proc on /proc: " + syscall.EPERM.Error()
		if !strings.Contains(text, "; tier T1 without /proc ("+why+")") {
			t.Errorf("probe: %q; want T1 without /proc naming %s", text, why)
		}
		if j.Tier != "T1" || j.T1 != nil || j.Proc == nil || !strings.Contains(*j.Proc, "mount proc on /proc") || !strings.Contains(*j.Proc, syscall.EPERM.Error()) {
			t.Errorf("probe --json: %+v; want tier T1, t1_without_proc naming %s", j, why)
		}
		code, out, errs := procageIn(t, "", true, "plan")
		if first, _, _ := strings.Cut(out, "\n"); code != 0 || !strings.Contains(first, "; tier T1 (") || strings.Contains(out, "\nmount proc ") {
			t.Errorf("plan: exit %d, first line %q, stderr %q; want tier T1 without the proc mount:\n%s", code, first, errs, out)
		}
		code, out, errs = procageIn(t, "", true, "run", "--", "/bin/sh", "-c", "echo $$")
		if code != 0 || strings.TrimSpace(out) != "2" {
			t.Errorf("run at auto: exit %d, stdout %q, stderr %q; want a T1 run (pid 2)", code, out, errs)
		}
		code, out, errs = procageIn(t, "", true, "run", "--read", "/proc", "--", "/bin/true")
		if code != exitFailure || out != "" || !strings.Contains(errs, "cannot mount a private /proc") {
			t.Errorf("run --read /proc: exit %d, stdout %q, stderr %q; want %d naming the missing private /proc", code, out, errs, exitFailure)
		}
	})
}
