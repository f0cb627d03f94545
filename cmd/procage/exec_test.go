package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain lets the test binary be procage itself: with PROCAGE_TEST_MAIN
// set it runs main, so the tests can check what a shell sees (real exit
// statuses, the two streams apart); on Linux in the host shape testenv's
// variables name (shape_linux_test.go).
func TestMain(m *testing.M) {
	if os.Getenv("PROCAGE_TEST_MAIN") == "1" {
		if err := enterHostShape(); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(125)
		}
		main()
		return
	}
	os.Exit(m.Run())
}

func procage(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PROCAGE_TEST_MAIN=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// TestProcess: the exit statuses and streams a shell sees from the
// process itself.
func TestProcess(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		out, errIs string // prefixes; "" = empty
	}{
		{[]string{"--help"}, 0, "procage runs commands in a sandbox", ""},
		{[]string{"--version"}, 0, "procage ", ""},
		{[]string{"plan", "--bogus"}, 125, "", "procage plan: unknown flag --bogus\nsee 'procage plan --help'\n"},
		{[]string{"run", "--read", "/usr", "--", "/procage/no/such/program"}, 127, "", "procage run: /procage/no/such/program: no such file\n"},
		{[]string{"explain", "--backend", "macos", "sysctl-read", "kern.procargs2"}, 1, "denied by rule ", ""},
	}
	for _, tt := range tests {
		code, out, errs := procage(t, tt.args...)
		if code != tt.code || !strings.HasPrefix(out, tt.out) || (tt.out == "") != (out == "") ||
			!strings.HasPrefix(errs, tt.errIs) || (tt.errIs == "") != (errs == "") {
			t.Errorf("procage %s: exit %d, stdout %q, stderr %q; want %d, %q..., %q...", strings.Join(tt.args, " "), code, out, errs, tt.code, tt.out, tt.errIs)
		}
	}
}
