package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
)

// TestRunLinuxWrite: on Linux, run cages the command: it writes inside the
// --write tree and fails outside it. At T2 a writable tree cannot keep git
// hooks out under Landlock, so the trust-handoff class is waived (without
// it the policy is refused, naming the gap); at T1 the new-names
// supervisor, where it runs, needs no waiver.
func TestRunLinuxWrite(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	inFile, outFile := filepath.Join(dir, "in"), filepath.Join(outside, "out")
	script := "echo in > " + inFile + " && echo out > " + outFile

	code, _, errs := runCLI(t, "run", "--tier", "t2", "--write", dir, "--", "/bin/sh", "-c", script)
	if code == 0 || !strings.Contains(errs, "trust-handoff-inside-writable-tree") {
		t.Errorf("T2 without --waive trust-handoff: exit %d, stderr %q; want a failure naming the gap", code, errs)
	}
	if _, err := os.Stat(inFile); !os.IsNotExist(err) {
		t.Fatalf("the refused command ran (stat: %v)", err)
	}

	code, _, errs = runCLI(t, "run", "--tier", "t2", "--write", dir, "--waive", "trust-handoff", "--", "/bin/sh", "-c", script)
	if code == 0 || !strings.Contains(errs, "Permission denied") {
		t.Errorf("T2: exit %d, stderr %q; want a failure with Permission denied", code, errs)
	}
	if _, err := os.Stat(outFile); !os.IsNotExist(err) {
		t.Errorf("T2: the command wrote outside the --write tree (stat: %v)", err)
	}
	if err := os.Remove(inFile); err != nil {
		t.Fatal(err)
	}
	// At T1 (the default where the probe passes) outside is a read-only
	// mount; with the new-names supervisor no waiver is needed.
	args := []string{"run", "--tier", "t1", "--write", dir, "--waive", "trust-handoff", "--", "/bin/sh", "-c", script}
	if cage.Probe().NewNames == nil {
		args = slices.Delete(args, 5, 7)
	}
	code, _, errs = runCLI(t, args...)
	if code == 0 || !strings.Contains(errs, "Read-only file system") {
		t.Errorf("T1: exit %d, stderr %q; want a failure with Read-only file system", code, errs)
	}
	if b, err := os.ReadFile(inFile); err != nil || string(b) != "in\n" {
		t.Errorf("inside the --write tree: %q, %v", b, err)
	}
	if _, err := os.Stat(outFile); !os.IsNotExist(err) {
		t.Errorf("the command wrote outside the --write tree (stat: %v)", err)
	}

	code, out, errs := runCLI(t, "probe")
	tail := ": Landlock+seccomp apply ok; tier T1; new names supervised\n"
	if nn := cage.Probe().NewNames; nn != nil {
		tail = ": Landlock+seccomp apply ok; tier T1; new names NOT supervised ("
	}
	if code != 0 || !strings.Contains(out, tail) || strings.Contains(out, "run search") {
		t.Errorf("probe: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// --accept-gap leaves a named Linux gap unenforced (the plan lists it);
// an unknown name is bad input.
func TestRunLinuxAcceptGap(t *testing.T) {
	dir := t.TempDir()
	inFile := filepath.Join(dir, "in")
	code, _, errs := runCLI(t, "run", "--tier", "t2", "--write", dir, "--accept-gap", "trust-handoff-inside-writable-tree", "--", "/bin/sh", "-c", "echo in > "+inFile)
	if code != 0 {
		t.Fatalf("with the gap accepted: exit %d, stderr %q", code, errs)
	}
	if b, err := os.ReadFile(inFile); err != nil || string(b) != "in\n" {
		t.Errorf("inside the --write tree: %q, %v", b, err)
	}
	code, out, errs := runCLI(t, "plan", "--backend", "linux", "--tier", "t2", "--write", dir, "--accept-gap", "trust-handoff-inside-writable-tree")
	if code != 0 || !strings.Contains(out, "trust-handoff-inside-writable-tree") {
		t.Errorf("plan with the gap accepted: exit %d, stderr %q; want the accepted gap in the plan:\n%s", code, errs, out)
	}
	code, out, errs = runCLI(t, "plan", "--backend", "linux", "--accept-gap", "no-such-gap")
	if code != exitFailure || out != "" || !strings.Contains(errs, "no-such-gap") {
		t.Errorf("an unknown gap: exit %d, stdout %q, stderr %q; want exit 125 naming it", code, out, errs)
	}
}

// TestRunLinuxHardDeny: the three commands that once read a store on
// Linux (a grant of the store, of a directory beneath one, of a tree
// holding one) are denied or refused, and a refusal says which path lies
// inside which tree and what flag would run it.
func TestRunLinuxHardDeny(t *testing.T) {
	h := t.TempDir()
	t.Setenv("HOME", h)
	for _, f := range []string{".config/gh/hosts.yml", ".cargo/credentials.toml", ".ssh/keys/id_work"} {
		p := filepath.Join(h, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("SECRET"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ read, file, errs string }{
		{".config/gh", ".config/gh/hosts.yml", "Permission denied"},
		{".ssh/keys", ".ssh/keys/id_work", "Permission denied"},
		{".cargo", ".cargo/credentials.toml", "procage run: linux cannot enforce secrets-inside-allowed-tree: secrets protects " +
			h + "/.cargo/credentials, " + h + "/.cargo/credentials.toml inside the readable tree " + h + "/.cargo " +
			"(to run it unenforced: --accept-gap secrets-inside-allowed-tree; or give up the protection: --waive secrets)\n"},
	} {
		code, out, errs := runCLI(t, "run", "--tier", "t2", "--read", filepath.Join(h, tt.read), "--", "/bin/cat", filepath.Join(h, tt.file))
		if code == 0 || strings.Contains(out, "SECRET") || !strings.Contains(errs, tt.errs) {
			t.Errorf("T2 --read ~/%s: exit %d, stdout %q, stderr %q; want a failure with %q", tt.read, code, out, errs, tt.errs)
		}
	}
	// At T1 the tree holding a store is no gap: the store reads as empty.
	code, out, errs := runCLI(t, "run", "--tier", "t1", "--read", filepath.Join(h, ".cargo"), "--", "/bin/cat", filepath.Join(h, ".cargo/credentials.toml"))
	if code != 0 || out != "" {
		t.Errorf("T1 --read ~/.cargo: exit %d, stdout %q, stderr %q; want 0 and nothing read", code, out, errs)
	}
}

// requireCage: a Linux host without Landlock fails the tests that cage,
// as the other Linux run tests do.
func requireCage(*testing.T) {}
