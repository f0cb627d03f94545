// Command benchratio prints the ratio of a caged spawn's time to an
// os/exec spawn's from `go test -bench` output, averaging repeated runs
// (-count). The macOS lane runs it on every leg:
//
//	go test -run '^$' -bench Spawn -count 3 ./tests ./internal/forkexec > bench.txt
//	go run ./internal/ci/benchratio bench.txt \
//		tests/BenchmarkSpawn=tests/BenchmarkPlainSpawn
//
// A benchmark is named by the last element of its package path, a slash
// and its full name without the -GOMAXPROCS suffix. A pair whose
// benchmarks are missing fails.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: benchratio bench.txt caged=baseline ...")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(2)
	}
	defer f.Close()
	os.Exit(run(f, os.Args[2:], os.Stdout, os.Stderr))
}

func run(r io.Reader, pairs []string, stdout, stderr io.Writer) int {
	means, err := parse(r)
	if err != nil {
		fmt.Fprintln(stderr, "benchratio:", err)
		return 2
	}
	code := 0
	for _, p := range pairs {
		caged, base, ok := strings.Cut(p, "=")
		if !ok {
			fmt.Fprintf(stderr, "benchratio: pair %q: want caged=baseline\n", p)
			return 2
		}
		c, okc := means[caged]
		b, okb := means[base]
		if !okc || !okb || b == 0 {
			fmt.Fprintf(stderr, "benchratio: %s: no result for %s or %s\n", p, caged, base)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "%s %.0f ns/op, %s %.0f ns/op: ratio %.2f\n", caged, c, base, b, c/b)
	}
	return code
}

// parse returns the mean ns/op of every benchmark in r.
func parse(r io.Reader) (map[string]float64, error) {
	sum := map[string]float64{}
	n := map[string]int{}
	pkg := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = path.Base(strings.TrimSpace(p))
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			continue // not a result line
		}
		for i := 2; i+1 < len(f); i += 2 {
			if f[i+1] != "ns/op" {
				continue
			}
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", line, err)
			}
			name := pkg + "/" + trimProcs(f[0])
			sum[name] += v
			n[name]++
		}
	}
	means := map[string]float64{}
	for k, s := range sum {
		means[k] = s / float64(n[k])
	}
	return means, sc.Err()
}

// trimProcs drops the -GOMAXPROCS suffix testing adds when it is not 1.
func trimProcs(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}
