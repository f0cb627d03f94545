package cage

import "github.com/procage-go/procage/internal/libsandbox"

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
func (c *Cage) SpawnParams(target, marker string) []libsandbox.Param {
	return c.spawnParams(target, marker)
}

func (cmd *Cmd) ExecTarget() string { return cmd.execTarget }

// TerminalGrants returns the paths and classes of the terminal grants a
// spawn with these stdio values would carry.
func TerminalGrants(stdio ...any) [][2]string {
	var out [][2]string
	for _, g := range terminalGrants(stdio...) {
		out = append(out, [2]string{g.path, g.class})
	}
	return out
}
