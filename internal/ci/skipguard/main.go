// Command skipguard reads a `go test -json` stream and fails when a test
// skipped for a reason its allow-list does not name, when a test failed or
// never finished, or when no test passed. The macOS CI lane runs it on
// every leg, and .ci/run on the Linux tests of tests/ and cage/ (as root
// and as nobody, with -allow internal/ci/skipguard/allow_linux.txt) and in
// .ci/kernel-matrix's Linux 6.1 guest (allow_kernel_matrix.txt), so a
// green run cannot hide tests that did not run:
//
//	go test -json ./... > test.json
//	go run ./internal/ci/skipguard test.json
//
// The allow-list (allow.txt, built in; -allow replaces it) holds lines of
// "package test message-substring", where package and test may be *.
// -must-pass "package test" (repeatable) also fails the run when that test
// did not pass: a lane whose point is a test cannot lose it to a skip.
// Skips from internal/testenv start with "procage-skip(reason)"; with
// PROCAGE_STRICT_SKIP=1 they are failures before they reach this guard.
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

//go:embed allow.txt
var defaultAllow string

func main() {
	allowFile := flag.String("allow", "", "allow-list file (default: the built-in allow.txt)")
	var mustPass []string
	flag.Func("must-pass", `"package test" that must have passed (repeatable)`, func(s string) error {
		if pkg, test, ok := strings.Cut(s, " "); !ok || pkg == "" || test == "" || strings.Contains(test, " ") {
			return fmt.Errorf("want \"package test\", got %q", s)
		}
		mustPass = append(mustPass, s)
		return nil
	})
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: skipguard [-allow file] [test.json ...]  (stdin when no file)")
		flag.PrintDefaults()
	}
	flag.Parse()
	os.Exit(run(*allowFile, mustPass, flag.Args(), os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(allowFile string, mustPass, files []string, stdin io.Reader, stdout, stderr io.Writer) int {
	text := defaultAllow
	if allowFile != "" {
		b, err := os.ReadFile(allowFile)
		if err != nil {
			fmt.Fprintln(stderr, "skipguard:", err)
			return 2
		}
		text = string(b)
	}
	allow, err := parseAllow(text)
	if err != nil {
		fmt.Fprintln(stderr, "skipguard:", err)
		return 2
	}
	var inputs []io.Reader
	if len(files) == 0 {
		inputs = append(inputs, stdin)
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "skipguard:", err)
			return 2
		}
		defer f.Close()
		inputs = append(inputs, f)
	}
	res, err := scan(io.MultiReader(inputs...), allow)
	if err != nil {
		fmt.Fprintln(stderr, "skipguard:", err)
		return 2
	}
	res.print(stdout)
	if problems := append(res.problems(), res.notPassed(mustPass)...); len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, "skipguard:", p)
		}
		return 1
	}
	return 0
}
