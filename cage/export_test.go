package cage

import (
	"github.com/procage-go/procage/internal/libsandbox"
	"github.com/procage-go/procage/profile/seatbelt"
)

// Test hooks: a fake compiler and sandbox check, so the refusal paths and
// the compile count run on any OS.

type Compiler = compiler

func WithCompiler(c Compiler) Option {
	return optionFunc(func(cfg *config) error { cfg.compiler = c; return nil })
}

func WithSandboxCheck(f func() (bool, error)) Option {
	return optionFunc(func(cfg *config) error { cfg.sandboxed = f; return nil })
}

var (
	ErrNotChecked = errNotChecked
	JudgeRound    = judgeRound
	EndRounds     = endRounds
	Environ       = environ
	NewMarker     = newMarker
	SiblingName   = siblingName
	ApplyVerdict  = applyVerdict
	MarkerVerdict = markerVerdict
)

func RunPrefix() string { return runPrefix }

// CachedVerdict exposes the probes' caching rule to tests.
var CachedVerdict = cachedVerdict

// SpawnParams and ExecTarget expose what a spawn binds, so the binding is
// tested where nothing can spawn.
func (c *Cage) SpawnParams(target, marker, temp string) []libsandbox.Param {
	return c.planned.(*seatbeltPlan).spawnParams(target, marker, temp)
}

// ProcCheck and RoundResult expose the end-of-run search's verdicts.
type ProcCheck = procCheck

func NewProcCheck(pid int, ours bool, err error) ProcCheck {
	return procCheck{pid: pid, ours: ours, err: err}
}

type RoundResult = roundResult

func NewRoundResult(killed int, unchecked []int, err error) RoundResult {
	return roundResult{killed: killed, unchecked: unchecked, err: err}
}

func (r RoundResult) Killed() int { return r.killed }

func (r RoundResult) Unchecked() []int { return r.unchecked }

func (cmd *Cmd) ExecTarget() string { return cmd.execTarget }

// TerminalGrants returns the paths and classes of the terminal grants a
// spawn with these stdio values would carry.
func TerminalGrants(stdio ...any) [][2]string {
	var out [][2]string
	for _, g := range terminalGrants(stdio...) {
		class := seatbelt.ExtensionRead
		if g.write {
			class = seatbelt.ExtensionReadWrite
		}
		out = append(out, [2]string{g.path, class})
	}
	return out
}

// The environment policies, for the filter's own tests.
type EnvPolicy = envPolicy

var (
	EnvDropSecrets = envDropSecrets
	EnvAllowlist   = envAllowlist
)

func (p envPolicy) Filter(environ []string) []string { return p.filter(environ) }

func HostBackend() Backend { return hostBackend }
