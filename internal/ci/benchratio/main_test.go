package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeBench is `go test -bench Spawn -count 2` output of the two packages
// (numbers made up).
const fakeBench = `goos: darwin
goarch: arm64
pkg: github.com/procage-go/procage/tests
cpu: Apple M1 (Virtual)
BenchmarkSpawn-3         	     200	   3000000 ns/op	         0 compiles/op
BenchmarkSpawn-3         	     200	   5000000 ns/op	         0 compiles/op
BenchmarkPlainSpawn-3    	     500	   1000000 ns/op
BenchmarkPlainSpawn-3    	     500	   1000000 ns/op
PASS
ok  	github.com/procage-go/procage/tests	4.1s
pkg: github.com/procage-go/procage/internal/forkexec
BenchmarkSpawn/small-heap/procage-3         	     300	    900000 ns/op
BenchmarkSpawn/small-heap/os-exec-3         	     300	   1800000 ns/op
BenchmarkSpawn/1GiB-heap/procage           	     300	    950000 ns/op
PASS
`

func TestParse(t *testing.T) {
	got, err := parse(strings.NewReader(fakeBench))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"tests/BenchmarkSpawn":                       4000000,
		"tests/BenchmarkPlainSpawn":                  1000000,
		"forkexec/BenchmarkSpawn/small-heap/procage": 900000,
		"forkexec/BenchmarkSpawn/small-heap/os-exec": 1800000,
		"forkexec/BenchmarkSpawn/1GiB-heap/procage":  950000,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		pairs   []string
		want    int
		wantOut string
	}{
		{"ratios", []string{"tests/BenchmarkSpawn=tests/BenchmarkPlainSpawn", "forkexec/BenchmarkSpawn/small-heap/procage=forkexec/BenchmarkSpawn/small-heap/os-exec"}, 0,
			"tests/BenchmarkSpawn 4000000 ns/op, tests/BenchmarkPlainSpawn 1000000 ns/op: ratio 4.00\nforkexec/BenchmarkSpawn/small-heap/procage 900000 ns/op, forkexec/BenchmarkSpawn/small-heap/os-exec 1800000 ns/op: ratio 0.50\n"},
		{"missing baseline", []string{"forkexec/BenchmarkSpawn/1GiB-heap/procage=forkexec/BenchmarkSpawn/1GiB-heap/os-exec"}, 1, ""},
		{"bad pair", []string{"tests/BenchmarkSpawn"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(strings.NewReader(fakeBench), tt.pairs, &stdout, &stderr); got != tt.want || stdout.String() != tt.wantOut {
				t.Errorf("run = %d, stdout %q (stderr %q); want %d, %q", got, stdout.String(), stderr.String(), tt.want, tt.wantOut)
			}
		})
	}
}
