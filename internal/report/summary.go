package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Read returns every row of the *.jsonl files in dir.
func Read(dir string) (sims []SimRow, canaries []CanaryRow, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(files)
	for _, name := range files {
		s, c, err := readFile(name)
		if err != nil {
			return nil, nil, err
		}
		sims, canaries = append(sims, s...), append(canaries, c...)
	}
	return sims, canaries, nil
}

func readFile(name string) (sims []SimRow, canaries []CanaryRow, err error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		var h Header
		if err := json.Unmarshal(line, &h); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		switch h.Kind {
		case KindSim:
			var r SimRow
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			sims = append(sims, r)
		case KindCanary:
			var r CanaryRow
			if err := json.Unmarshal(line, &r); err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			canaries = append(canaries, r)
		default:
			return nil, nil, fmt.Errorf("%s:%d: unknown row kind %q", name, n, h.Kind)
		}
	}
	return sims, canaries, sc.Err()
}

// Tally counts, for one OS build, architecture and simulator variant, the
// cases where each kernel oracle agreed with the simulator.
type Tally struct {
	OSBuild, OSVersion, Arch, Variant string
	Cases                             int
	ExecAgree, ExecDisagree           int
	CheckAgree, CheckDisagree         int
	Disagreements                     []string // "case: oracle kernel, simulator decision"
}

// Tallies groups sim rows by OS build, architecture and variant, in that
// order.
func Tallies(rows []SimRow) []Tally {
	type k struct{ build, arch, variant string }
	by := map[k]*Tally{}
	var keys []k
	for _, r := range rows {
		key := k{r.OSBuild, r.Arch, r.Variant}
		t := by[key]
		if t == nil {
			t = &Tally{OSBuild: r.OSBuild, OSVersion: r.OSVersion, Arch: r.Arch, Variant: r.Variant}
			by[key] = t
			keys = append(keys, key)
		}
		t.Cases++
		sim := Outcome(r.SimAllowed)
		for _, o := range []struct {
			name, got       string
			agree, disagree *int
		}{
			{"sandbox-exec", r.SandboxExec, &t.ExecAgree, &t.ExecDisagree},
			{"sandbox_check", r.SandboxCheck, &t.CheckAgree, &t.CheckDisagree},
		} {
			switch {
			case o.got == "":
			case o.got == sim:
				*o.agree++
			default:
				*o.disagree++
				t.Disagreements = append(t.Disagreements,
					fmt.Sprintf("%s (%s): %s %s, simulator %s", r.Case, r.Access, o.name, o.got, r.SimDecision))
			}
		}
	}
	slices.SortFunc(keys, func(a, b k) int {
		return strings.Compare(a.build+"\x00"+a.arch+"\x00"+a.variant, b.build+"\x00"+b.arch+"\x00"+b.variant)
	})
	out := make([]Tally, 0, len(keys))
	for _, key := range keys {
		out = append(out, *by[key])
	}
	return out
}

// Print writes a readable summary of a report.
func Print(w io.Writer, sims []SimRow, canaries []CanaryRow) {
	for _, t := range Tallies(sims) {
		variant := t.Variant
		if variant == "" {
			variant = "default"
		}
		fmt.Fprintf(w, "macOS %s (%s) %s, simulator variant %s: %d cases; sandbox-exec agrees %d, disagrees %d; sandbox_check agrees %d, disagrees %d\n",
			t.OSVersion, t.OSBuild, t.Arch, variant, t.Cases, t.ExecAgree, t.ExecDisagree, t.CheckAgree, t.CheckDisagree)
		for _, d := range t.Disagreements {
			fmt.Fprintf(w, "  disagrees: %s\n", d)
		}
	}
	for _, c := range canaries {
		fmt.Fprintf(w, "canary macOS %s (%s) %s %s: %s", c.OSVersion, c.OSBuild, c.Arch, c.Test, c.Call)
		if c.Input != "" {
			fmt.Fprintf(w, " %q", c.Input)
		}
		fmt.Fprintf(w, " ret %d errno %d result %d", c.Ret, c.Errno, c.Result)
		if c.BytecodeSize != 0 {
			fmt.Fprintf(w, " bytecode %d bytes", c.BytecodeSize)
		}
		if c.Note != "" {
			fmt.Fprintf(w, " (%s)", c.Note)
		}
		fmt.Fprintln(w)
	}
}
