package tests

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameRealTests: every test or benchmark the docs cite as evidence
// (docs/*.md, README.md) exists in the repository, so a canary named in
// the threat model cannot silently disappear.
func TestDocsNameRealTests(t *testing.T) {
	defined := map[string]bool{}
	funcRE := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)[A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != ".." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range funcRE.FindAllStringSubmatch(string(b), -1) {
				defined[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(defined) < 50 {
		t.Fatalf("found only %d test functions; the walk is broken", len(defined))
	}
	docs, _ := filepath.Glob("../docs/*.md")
	docs = append(docs, "../README.md")
	citeRE := regexp.MustCompile("`((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)(?:/[^`]*)?`")
	cited := 0
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range citeRE.FindAllStringSubmatch(string(b), -1) {
			cited++
			if !defined[m[1]] {
				t.Errorf("%s cites %s, which no _test.go file defines", doc, m[1])
			}
		}
	}
	if cited < 20 {
		t.Errorf("the docs cite only %d tests; expected the threat model's canaries", cited)
	}
}
