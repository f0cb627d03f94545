package testenv

import (
	"testing"
	"time"
)

// OutputWithin calls output (a Cmd's Output) and fails the test if it has
// not returned within d, saying what was expected: a run's Wait must not
// block on a pipe a background process of the run holds open. Call it on
// the test's goroutine; output runs on another.
func OutputWithin(t testing.TB, d time.Duration, what string, output func() ([]byte, error)) ([]byte, error) {
	t.Helper()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := output()
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-time.After(d):
		t.Fatalf("%s: not returned after %v", what, d)
		return nil, nil
	}
}
