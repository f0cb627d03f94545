package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output and build-fail events
}

// allowRule lets a skip pass: package and test match exactly or are "*",
// and the skip's output contains text.
type allowRule struct {
	pkg, test, text string
}

func (r allowRule) matches(pkg, test, output string) bool {
	return (r.pkg == "*" || r.pkg == pkg) && (r.test == "*" || r.test == test) &&
		strings.Contains(output, r.text)
}

// parseAllow reads allow-list lines "package test text"; # starts a comment
// line.
func parseAllow(text string) ([]allowRule, error) {
	var rules []allowRule
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.SplitN(line, " ", 3)
		if len(f) < 3 || strings.TrimSpace(f[2]) == "" {
			return nil, fmt.Errorf("allow-list line %d: want \"package test message-substring\", got %q", i+1, line)
		}
		rules = append(rules, allowRule{pkg: f[0], test: f[1], text: strings.TrimSpace(f[2])})
	}
	return rules, nil
}

type key struct{ pkg, test string }

// skip is one skipped test and the message it gave.
type skip struct {
	key
	message string
	allowed bool
}

type counts struct{ pass, fail, skip int }

// result is what a stream showed.
type result struct {
	pkgs       map[string]*counts
	skips      []skip
	fails      []key
	failOutput map[key]string // the tail of each failed test's output
	pkgFails   []string
	buildFails []string
	unfinished []key
	nonJSON    []string
	passed     map[key]bool
}

// maxOutput bounds the output kept per test; a skip message is short.
// failTail is how much of a failed test's output the summary repeats.
const (
	maxOutput = 1 << 20
	failTail  = 4 << 10
)

// scan reads a `go test -json` stream.
func scan(r io.Reader, allow []allowRule) (*result, error) {
	res := &result{pkgs: map[string]*counts{}, failOutput: map[key]string{}, passed: map[key]bool{}}
	running := map[key]bool{}
	var order []key
	output := map[key]*strings.Builder{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var ev event
		if line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			res.nonJSON = append(res.nonJSON, string(line))
			continue
		}
		k := key{ev.Package, ev.Test}
		c := res.pkgs[ev.Package]
		if c == nil && ev.Package != "" {
			c = &counts{}
			res.pkgs[ev.Package] = c
		}
		switch ev.Action {
		case "build-fail":
			res.buildFails = append(res.buildFails, ev.ImportPath)
		case "run":
			if !running[k] {
				order = append(order, k)
			}
			running[k] = true
		case "output":
			if ev.Test == "" {
				continue
			}
			b := output[k]
			if b == nil {
				b = &strings.Builder{}
				output[k] = b
			}
			if b.Len() < maxOutput {
				b.WriteString(ev.Output)
			}
		case "pass", "fail", "skip":
			if ev.Test == "" {
				// The package's result; a skip here means no test files.
				if ev.Action == "fail" {
					res.pkgFails = append(res.pkgFails, ev.Package)
				}
				continue
			}
			delete(running, k)
			switch ev.Action {
			case "pass":
				c.pass++
				res.passed[k] = true
			case "fail":
				c.fail++
				res.fails = append(res.fails, k)
				if b := output[k]; b != nil {
					out := b.String()
					res.failOutput[k] = out[max(0, len(out)-failTail):]
				}
			case "skip":
				c.skip++
				var text string
				if b := output[k]; b != nil {
					text = b.String()
				}
				msg := skipMessage(text)
				allowed := slices.ContainsFunc(allow, func(r allowRule) bool { return r.matches(k.pkg, k.test, msg) })
				res.skips = append(res.skips, skip{key: k, message: msg, allowed: allowed})
			}
			delete(output, k)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, k := range order {
		if running[k] {
			res.unfinished = append(res.unfinished, k)
		}
	}
	return res, nil
}

// skipMessage is a skipped test's output without test2json's framing lines
// (=== RUN, --- SKIP and the like).
func skipMessage(output string) string {
	var lines []string
	for _, l := range strings.Split(output, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		lines = append(lines, t)
	}
	return strings.Join(lines, " | ")
}

// problems lists everything that fails the lane.
func (r *result) problems() []string {
	var p []string
	for _, s := range r.skips {
		if !s.allowed {
			p = append(p, fmt.Sprintf("%s %s skipped, and the allow-list does not name it: %s", s.pkg, s.test, s.message))
		}
	}
	for _, k := range r.fails {
		p = append(p, fmt.Sprintf("%s %s failed", k.pkg, k.test))
	}
	for _, pkg := range r.pkgFails {
		p = append(p, fmt.Sprintf("%s failed", pkg))
	}
	for _, pkg := range r.buildFails {
		p = append(p, fmt.Sprintf("%s did not build", pkg))
	}
	for _, k := range r.unfinished {
		p = append(p, fmt.Sprintf("%s %s started and never finished", k.pkg, k.test))
	}
	var passed int
	for _, c := range r.pkgs {
		passed += c.pass
	}
	if passed == 0 {
		p = append(p, "no test passed")
	}
	return p
}

// notPassed lists each test of must ("package test") that did not pass:
// it failed, skipped or never ran.
func (r *result) notPassed(must []string) []string {
	var p []string
	for _, m := range must {
		pkg, test, _ := strings.Cut(m, " ")
		if !r.passed[key{pkg, test}] {
			p = append(p, fmt.Sprintf("%s %s must pass, and did not (failed, skipped or not run)", pkg, test))
		}
	}
	return p
}

// print writes a per-package summary and every skip.
func (r *result) print(w io.Writer) {
	var pkgs []string
	var total counts
	for pkg, c := range r.pkgs {
		pkgs = append(pkgs, pkg)
		total.pass += c.pass
		total.fail += c.fail
		total.skip += c.skip
	}
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		c := r.pkgs[pkg]
		fmt.Fprintf(w, "%-60s pass %4d  skip %3d  fail %3d\n", pkg, c.pass, c.skip, c.fail)
	}
	for _, s := range r.skips {
		verdict := "NOT ALLOWED"
		if s.allowed {
			verdict = "allowed"
		}
		fmt.Fprintf(w, "skip (%s) %s %s: %s\n", verdict, s.pkg, s.test, s.message)
	}
	for _, k := range r.fails {
		fmt.Fprintf(w, "FAIL %s %s:\n%s", k.pkg, k.test, r.failOutput[k])
	}
	for _, l := range r.nonJSON {
		fmt.Fprintf(w, "not a test2json line: %.200s\n", l)
	}
	fmt.Fprintf(w, "%d packages; tests: pass %d, skip %d, fail %d\n", len(pkgs), total.pass, total.skip, total.fail)
}
