package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	full := t.TempDir()
	// A fake report as the Writer lays it out.
	rows := `{"kind":"sim","os_build":"24C101","os_version":"15.2","arch":"arm64","test":"TestDecideMatchesSeatbelt","case":"regex in another case","variant":"","profile":"(version 1)(allow default)(deny file-read* (regex #\"/F$\"))","access":"file-read-data /d/f","sandbox_exec":"allowed","sandbox_check":"allowed","sim_allowed":false,"sim_rule":1,"sim_decision":"denied by rule 1"}
{"kind":"canary","os_build":"24C101","os_version":"15.2","arch":"arm64","test":"TestCanaryCompile","call":"sandbox_compile_string","input":"(version 1)(deny default)","bytecode_size":388,"ret":0,"errno":0,"result":0}
`
	if err := os.WriteFile(filepath.Join(full, "sim-1.jsonl"), []byte(rows), 0o600); err != nil {
		t.Fatal(err)
	}
	canaryOnly := t.TempDir()
	if err := os.WriteFile(filepath.Join(canaryOnly, "canary-1.jsonl"), []byte(strings.SplitAfter(rows, "\n")[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "x.jsonl"), []byte("nope\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		dir        string
		requireSim bool
		want       int
		wantOut    string
	}{
		{"full", full, true, 0, "macOS 15.2 (24C101) arm64, simulator variant default: 1 cases; sandbox-exec agrees 0, disagrees 1; sandbox_check agrees 0, disagrees 1"},
		{"canaries only", canaryOnly, false, 0, "bytecode 388 bytes"},
		{"canaries only, sim required", canaryOnly, true, 1, "bytecode 388 bytes"},
		{"empty", t.TempDir(), true, 1, ""},
		{"unreadable", bad, false, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(tt.dir, tt.requireSim, &stdout, &stderr); got != tt.want || !strings.Contains(stdout.String(), tt.wantOut) {
				t.Errorf("run = %d, stdout %q, stderr %q; want %d, stdout containing %q", got, stdout.String(), stderr.String(), tt.want, tt.wantOut)
			}
		})
	}
}
