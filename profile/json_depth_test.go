package profile

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// nested is a policy whose fs value is depth arrays deep.
func nested(depth int) string {
	return `{"version":1,"base":"v1","fs":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
}

// allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestJSONDepthLimit (issue 20): a deeply nested policy is refused before
// its nesting costs memory. A 200 KB document nested 100,000 deep drove
// procage to 24 GiB: the locator recorded every value's field path, each
// as long as its depth, so memory grew with the square of the depth. The
// refusal names the line, the column and the limit.
func TestJSONDepthLimit(t *testing.T) {
	const budget = 8 << 20 // bytes: the 200 KB input is copied a few times, nothing more
	// A small depth first: if the limit is gone, fail here rather than
	// exhaust the machine's memory below.
	for _, depth := range []int{2000, 100_000} {
		in := nested(depth)
		var err error
		start := time.Now()
		n := allocated(func() { _, err = ParseJSON(strings.NewReader(in)) })
		took := time.Since(start)
		var pe *Error
		if !errors.As(err, &pe) || !strings.Contains(pe.Error(), "nested deeper than 32 levels") {
			t.Fatalf("depth %d (%d bytes): %v; want an *Error naming the limit of 32", depth, len(in), err)
		}
		// The first bracket past the limit: column 31 (after `..."fs":`) + 32.
		if pe.Line != 1 || pe.Column != len(`{"version":1,"base":"v1","fs":`)+maxJSONDepth {
			t.Errorf("depth %d: error at line %d, column %d; want line 1, column %d", depth, pe.Line, pe.Column, len(`{"version":1,"base":"v1","fs":`)+maxJSONDepth)
		}
		if n > budget || took > 5*time.Second {
			t.Fatalf("depth %d (%d bytes): refused after allocating %d MiB in %v; want under %d MiB and 5 s", depth, len(in), n>>20, took, budget>>20)
		}
		t.Logf("depth %d (%d KB): %v after %d KB allocated in %v", depth, len(in)>>10, err, n>>10, took)
	}
	// The limit is on arrays and objects together, wherever they nest; a
	// policy's own nesting (4: object, fs, rule, access) is far below it.
	for _, in := range []string{
		`{"version":` + strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat("}", 40) + `,"base":"v1"}`,
		`{"version":1,"base":"v1","waive":` + strings.Repeat(`[{"x":`, 20) + `1` + strings.Repeat("}]", 20) + `}`,
		`{"version":1,"base":"v1","fs":[` + strings.Repeat(`{"access":`, 40) + `1` + strings.Repeat("}", 40) + `]}`,
	} {
		if _, err := ParseJSON(strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), "nested deeper than") {
			t.Errorf("%.60s...: %v, want the depth refusal", in, err)
		}
	}
	in := `{"version":1,"base":"v1","fs":[{"access":["read"],"subpath":"/usr"}]}`
	if _, err := ParseJSON(strings.NewReader(in)); err != nil {
		t.Errorf("an ordinary policy: %v", err)
	}
	in = `{"version":1,"base":"v1","fs":` + strings.Repeat("[", maxJSONDepth-1) + strings.Repeat("]", maxJSONDepth-1) + `}`
	if _, err := ParseJSON(strings.NewReader(in)); err != nil && strings.Contains(err.Error(), "nested") {
		t.Errorf("nesting at the limit: %v", err)
	}
}
