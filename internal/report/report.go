// Package report records what the kernel did in procage's darwin tests, so
// one macOS CI run tells which simulator semantics each release follows and
// whether the hand-built call blocks work. When PROCAGE_REPORT_DIR is set a
// test opens a report and adds rows; at the test's end they are written as
// JSON lines to <dir>/<name>-<pid>.jsonl:
//
//	rep := report.Open(t, "sim") // nil, and every method a no-op, when unset
//	rep.Sim(report.SimRow{Case: "literal deny", Profile: src, Access: a.String(),
//		SandboxExec: report.Outcome(allowed), SimAllowed: d.Allowed, SimRule: d.Rule})
//
// Rows of one case (same case, variant, profile and access) are merged, so
// the sandbox-exec run and the sandbox_check of a case can be added
// separately and land in one row. [Summarize] reads a report directory
// back; internal/ci/reportsum prints it in the CI log.
//
// # Limitations
//
// Rows are kept in memory until the test that opened the report ends; a
// test binary killed before then writes nothing.
package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// DirEnv names the report directory setting.
const DirEnv = "PROCAGE_REPORT_DIR"

// Row kinds.
const (
	KindSim    = "sim"
	KindCanary = "canary"
)

// Header is common to every row; Writer fills it.
type Header struct {
	Kind      string `json:"kind"`
	OSBuild   string `json:"os_build"`   // kern.osversion, e.g. 24C101
	OSVersion string `json:"os_version"` // kern.osproductversion, e.g. 15.2
	Arch      string `json:"arch"`       // GOARCH
	Test      string `json:"test"`       // the test that opened the report
}

// SimRow is one simulator-versus-kernel case.
type SimRow struct {
	Header
	Case string `json:"case"`
	// Variant names the simulator's semantic variant ("" for its default).
	Variant string            `json:"variant"`
	Profile string            `json:"profile"`
	Params  map[string]string `json:"params,omitempty"`
	Access  string            `json:"access"`
	// SandboxExec is what a program under sandbox-exec saw, SandboxCheck
	// what sandbox_check said of a live sandboxed child: Allowed, Denied,
	// or "" when not asked.
	SandboxExec  string `json:"sandbox_exec,omitempty"`
	SandboxCheck string `json:"sandbox_check,omitempty"`
	SimAllowed   bool   `json:"sim_allowed"`
	SimRule      int    `json:"sim_rule"` // index of the deciding rule, -1 for none
	SimDecision  string `json:"sim_decision"`
}

// CanaryRow is one raw libsandbox or __mac_syscall result.
type CanaryRow struct {
	Header
	Call         string `json:"call"`            // e.g. "sandbox_compile_string"
	Input        string `json:"input,omitempty"` // profile text, operation, path
	BytecodeSize int    `json:"bytecode_size,omitempty"`
	Ret          int64  `json:"ret"`
	Errno        int    `json:"errno"`
	Result       uint64 `json:"result"` // a call block's result slot
	Note         string `json:"note,omitempty"`
}

// Outcomes of a kernel oracle.
const (
	Allowed = "allowed"
	Denied  = "denied"
)

// Outcome spells allowed as Allowed or Denied.
func Outcome(allowed bool) string {
	if allowed {
		return Allowed
	}
	return Denied
}

// Writer collects a test's rows. A nil *Writer ignores them.
type Writer struct {
	path   string
	header Header
	mu     sync.Mutex
	rows   []any
	sims   map[simKey]*SimRow
}

type simKey struct{ kase, variant, profile, access string }

// Open returns a Writer for rows of tb named name, written when tb ends, or
// nil when DirEnv is unset. A directory that cannot be created fails tb.
func Open(tb testing.TB, name string) *Writer {
	tb.Helper()
	dir := os.Getenv(DirEnv)
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatalf("%s: %v", DirEnv, err)
		return nil
	}
	build, version := osInfo()
	w := &Writer{
		path:   filepath.Join(dir, fmt.Sprintf("%s-%d.jsonl", name, os.Getpid())),
		header: Header{OSBuild: build, OSVersion: version, Arch: runtime.GOARCH, Test: tb.Name()},
		sims:   map[simKey]*SimRow{},
	}
	tb.Cleanup(func() {
		if err := w.flush(); err != nil {
			tb.Errorf("writing the report: %v", err)
		}
	})
	return w
}

// Sim adds a simulator case, merged with an earlier row of the same case.
func (w *Writer) Sim(r SimRow) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	k := simKey{r.Case, r.Variant, r.Profile, r.Access}
	if old := w.sims[k]; old != nil {
		if r.SandboxExec != "" {
			old.SandboxExec = r.SandboxExec
		}
		if r.SandboxCheck != "" {
			old.SandboxCheck = r.SandboxCheck
		}
		return
	}
	r.Header = w.header
	r.Kind = KindSim
	w.sims[k] = &r
	w.rows = append(w.rows, &r)
}

// Canary adds a raw call result.
func (w *Writer) Canary(r CanaryRow) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r.Header = w.header
	r.Kind = KindCanary
	w.rows = append(w.rows, &r)
}

// flush appends the rows to the file, one JSON object a line.
func (w *Writer) flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.rows) == 0 {
		return nil
	}
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	for _, r := range w.rows {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	w.rows, w.sims = nil, map[simKey]*SimRow{}
	return f.Close()
}
