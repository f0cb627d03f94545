package report

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOpenUnset(t *testing.T) {
	t.Setenv(DirEnv, "")
	w := Open(t, "sim")
	if w != nil {
		t.Fatalf("Open with %s unset = %v, want nil", DirEnv, w)
	}
	w.Sim(SimRow{Case: "x"}) // a nil Writer ignores rows
	w.Canary(CanaryRow{Call: "x"})
}

// writeFake writes a fake report through the Writer, as the darwin tests
// do: a sandbox-exec row and a sandbox_check row of the same case merge.
func writeFake(t *testing.T, dir string) {
	t.Setenv(DirEnv, dir)
	t.Run("TestDecideMatchesSeatbelt", func(t *testing.T) {
		w := Open(t, "sim")
		w.header.OSBuild, w.header.OSVersion = "25A354", "26.0"
		deny := `(version 1)(allow default)(deny file-read* (literal "/d/f"))`
		w.Sim(SimRow{Case: "literal deny", Profile: deny, Access: "file-read-data /d/f", SandboxExec: Denied, SimAllowed: false, SimRule: 2, SimDecision: "denied by rule 2"})
		w.Sim(SimRow{Case: "regex in another case", Profile: `(version 1)(allow default)(deny file-read* (regex #"/F$"))`, Access: "file-read-data /d/f", SandboxExec: Allowed, SimAllowed: false, SimRule: 2, SimDecision: "denied by rule 2"})
		w.Sim(SimRow{Case: "regex in another case", Variant: "regex-case-sensitive", Profile: `(version 1)(allow default)(deny file-read* (regex #"/F$"))`, Access: "file-read-data /d/f", SandboxExec: Allowed, SimAllowed: true, SimRule: 1, SimDecision: "allowed by default"})
		w.Sim(SimRow{Case: "literal deny", Profile: deny, Access: "file-read-data /d/f", SandboxCheck: Allowed, SimAllowed: false, SimRule: 2, SimDecision: "denied by rule 2"})
	})
	t.Run("TestCanaryCompile", func(t *testing.T) {
		w := Open(t, "canary")
		w.header.OSBuild, w.header.OSVersion = "25A354", "26.0"
		w.Canary(CanaryRow{Call: "sandbox_compile_string", Input: "(version 1)(deny default)", BytecodeSize: 412})
		w.Canary(CanaryRow{Call: "__mac_syscall(Sandbox, 2) self", Ret: 0, Result: 0})
	})
}

func TestWriteRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report") // Open creates it
	writeFake(t, dir)
	sims, canaries, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := func(kind, test string) Header {
		return Header{Kind: kind, OSBuild: "25A354", OSVersion: "26.0", Arch: runtime.GOARCH, Test: test}
	}
	simTest := "TestWriteRead/TestDecideMatchesSeatbelt"
	regex := `(version 1)(allow default)(deny file-read* (regex #"/F$"))`
	wantSims := []SimRow{
		{Header: h(KindSim, simTest), Case: "literal deny", Profile: `(version 1)(allow default)(deny file-read* (literal "/d/f"))`, Access: "file-read-data /d/f",
			SandboxExec: Denied, SandboxCheck: Allowed, SimRule: 2, SimDecision: "denied by rule 2"},
		{Header: h(KindSim, simTest), Case: "regex in another case", Profile: regex, Access: "file-read-data /d/f", SandboxExec: Allowed, SimRule: 2, SimDecision: "denied by rule 2"},
		{Header: h(KindSim, simTest), Case: "regex in another case", Variant: "regex-case-sensitive", Profile: regex, Access: "file-read-data /d/f",
			SandboxExec: Allowed, SimAllowed: true, SimRule: 1, SimDecision: "allowed by default"},
	}
	if diff := cmp.Diff(wantSims, sims); diff != "" {
		t.Errorf("sim rows (-want +got):\n%s", diff)
	}
	canaryTest := "TestWriteRead/TestCanaryCompile"
	wantCanaries := []CanaryRow{
		{Header: h(KindCanary, canaryTest), Call: "sandbox_compile_string", Input: "(version 1)(deny default)", BytecodeSize: 412},
		{Header: h(KindCanary, canaryTest), Call: "__mac_syscall(Sandbox, 2) self"},
	}
	if diff := cmp.Diff(wantCanaries, canaries); diff != "" {
		t.Errorf("canary rows (-want +got):\n%s", diff)
	}

	wantTallies := []Tally{
		{OSBuild: "25A354", OSVersion: "26.0", Arch: runtime.GOARCH, Cases: 2, ExecAgree: 1, ExecDisagree: 1, CheckDisagree: 1,
			Disagreements: []string{
				"literal deny (file-read-data /d/f): sandbox_check allowed, simulator denied by rule 2",
				"regex in another case (file-read-data /d/f): sandbox-exec allowed, simulator denied by rule 2",
			}},
		{OSBuild: "25A354", OSVersion: "26.0", Arch: runtime.GOARCH, Variant: "regex-case-sensitive", Cases: 1, ExecAgree: 1},
	}
	if diff := cmp.Diff(wantTallies, Tallies(sims)); diff != "" {
		t.Errorf("Tallies (-want +got):\n%s", diff)
	}

	var b strings.Builder
	Print(&b, sims, canaries)
	for _, want := range []string{
		"macOS 26.0 (25A354) " + runtime.GOARCH + ", simulator variant default: 2 cases; sandbox-exec agrees 1, disagrees 1; sandbox_check agrees 0, disagrees 1\n",
		"simulator variant regex-case-sensitive: 1 cases; sandbox-exec agrees 1, disagrees 0",
		"  disagrees: regex in another case (file-read-data /d/f): sandbox-exec allowed, simulator denied by rule 2\n",
		`TestWriteRead/TestCanaryCompile: sandbox_compile_string "(version 1)(deny default)" ret 0 errno 0 result 0 bytecode 412 bytes` + "\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("Print lacks %q:\n%s", want, b.String())
		}
	}
}

func TestReadErrors(t *testing.T) {
	for _, tt := range []struct{ name, text, want string }{
		{"not JSON", "{\n", "bad.jsonl:1:"},
		{"unknown kind", `{"kind":"other"}` + "\n", `unknown row kind "other"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, _, err := Read(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestOutcome(t *testing.T) {
	if Outcome(true) != Allowed || Outcome(false) != Denied {
		t.Errorf("Outcome(true), Outcome(false) = %q, %q", Outcome(true), Outcome(false))
	}
}
