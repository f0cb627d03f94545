// Command reportsum prints the kernel report the darwin tests wrote under
// PROCAGE_REPORT_DIR: per macOS build, architecture and simulator variant,
// how often sandbox-exec and sandbox_check agreed with the simulator, each
// disagreement, and the libsandbox canaries' raw results.
//
//	PROCAGE_REPORT_DIR=$PWD/report go test ./...
//	go run ./internal/ci/reportsum -require-sim report
//
// With -require-sim it fails when the report holds no simulator case, e.g.
// because the simulator-versus-kernel test did not run.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/procage-go/procage/internal/report"
)

func main() {
	requireSim := flag.Bool("require-sim", false, "fail when the report has no simulator case")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: reportsum [-require-sim] dir")
		os.Exit(2)
	}
	os.Exit(run(flag.Arg(0), *requireSim, os.Stdout, os.Stderr))
}

func run(dir string, requireSim bool, stdout, stderr io.Writer) int {
	sims, canaries, err := report.Read(dir)
	if err != nil {
		fmt.Fprintln(stderr, "reportsum:", err)
		return 2
	}
	report.Print(stdout, sims, canaries)
	if requireSim && len(sims) == 0 {
		fmt.Fprintf(stderr, "reportsum: %s holds no simulator case\n", dir)
		return 1
	}
	return 0
}
