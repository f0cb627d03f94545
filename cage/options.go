package cage

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/preset"
	"github.com/procage-go/procage/profile"
)

// Option configures [New]. It is sealed: only this package makes Options.
type Option interface{ apply(*config) error }

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// TTY says how a caged child relates to the caller's terminal.
type TTY int

const (
	// TTYNewSession starts the child in a new session without a
	// controlling terminal (setsid). The default.
	TTYNewSession TTY = iota
	// TTYInherit keeps the child in the caller's session, in its own process
	// group, so it can use the caller's terminal. Making that group the
	// terminal's foreground group (tcsetpgrp) is the caller's business.
	TTYInherit
)

func (t TTY) String() string {
	switch t {
	case TTYNewSession:
		return "new-session"
	case TTYInherit:
		return "inherit"
	}
	return fmt.Sprintf("TTY(%d)", int(t))
}

// Rlimit is a resource limit the child sets before its profile applies.
// Resource is a RLIMIT_* constant of the target OS (golang.org/x/sys/unix).
type Rlimit struct {
	Resource int
	Cur, Max uint64
}

type config struct {
	proxyNet    *proxyNet
	proxyPort   int // tests: the port the run's proxy listens on (0: chosen per run)
	limit       int
	rlimits     []Rlimit
	tty         TTY
	env         envPolicy
	fs          pathresolve.FS
	firmlinks   []pathresolve.Firmlink
	fsSet       bool
	home        string
	privateTemp bool
	coreDumps   bool          // keep the caller's RLIMIT_CORE (WithCoreDumps)
	backend     Backend       // 0 until New picks the host's
	links       []string      // accepted links, kernel spelling
	accept      []profile.Gap // Linux gaps the caller accepts (AcceptGaps)
	planOnly    bool          // PlanOnly
	linuxTier   LinuxTier     // WithLinuxTier

	presets []preset.Preset // WithPresets, in order

	// Test hooks (export_test.go); nil means the platform's own.
	compiler  compiler
	sandboxed func() (bool, error)
	enforce   func(*Cage, planned) (backend, error)
}

// WithCompileLimit sets the largest number of rules a macOS (Seatbelt)
// profile may have (default 2,000,
// [github.com/procage-go/procage/profile/seatbelt.DefaultLimit]). More is
// refused ([ErrTooManyRules]). It has no effect on another backend's plan.
func WithCompileLimit(n int) Option {
	return optionFunc(func(c *config) error {
		if n < 1 {
			return fmt.Errorf("cage: compile limit %d must be positive", n)
		}
		c.limit = n
		return nil
	})
}

// WithRlimits sets resource limits each child applies, in order, before
// its profile. Naming RLIMIT_CORE replaces the default core limit of 0
// (see [WithCoreDumps]). The child still holds the caller's descriptors
// until it executes the target, so an RLIMIT_NOFILE at or below the
// caller's open descriptor count can fail the spawn at a step that opens
// one (EMFILE, the step named): the target never runs.
func WithRlimits(limits ...Rlimit) Option {
	return optionFunc(func(c *config) error {
		for _, l := range limits {
			if l.Resource < 0 {
				return fmt.Errorf("cage: rlimit resource %d is negative", l.Resource)
			}
			if l.Cur > l.Max {
				return fmt.Errorf("cage: rlimit %d: soft limit %d above hard limit %d", l.Resource, l.Cur, l.Max)
			}
		}
		c.rlimits = append(c.rlimits, limits...)
		return nil
	})
}

// WithCoreDumps lets a caged process dump core as the caller's own
// RLIMIT_CORE allows. By default every run starts with RLIMIT_CORE 0, soft
// and hard, which it cannot raise (a caged process holds no
// CAP_SYS_RESOURCE): a core file, or the memory a pipe core_pattern helper
// receives, would carry what the run read out of the cage (core(5)).
func WithCoreDumps() Option {
	return optionFunc(func(c *config) error { c.coreDumps = true; return nil })
}

// WithTTY sets the terminal mode (default [TTYNewSession]).
func WithTTY(t TTY) Option {
	return optionFunc(func(c *config) error {
		if t != TTYNewSession && t != TTYInherit {
			return fmt.Errorf("cage: unknown TTY mode %d", int(t))
		}
		c.tty = t
		return nil
	})
}

// WithEnvAllowlist passes a child exactly the named variables of the
// caller when Cmd.Env is nil (a non-nil Cmd.Env is passed as written). By
// default a child gets the caller's variables except those that commonly
// carry credentials or inject code ([IsSecret]) and those whose value is a
// URL with a password (postgres://user:pw@host); a drop list cannot know
// every tool's names, so for an agent running someone else's commands,
// prefer an allowlist.
func WithEnvAllowlist(names ...string) Option {
	return optionFunc(func(c *config) error { c.env = envAllowlist(names...); return nil })
}

// WithFS resolves policy paths through fsys with the given firmlinks
// instead of the host's file system; macfs provides a simulated
// macOS one, so with WithBackend(BackendMacOS) a Mac's plan can be
// inspected on any OS. A spawn resolves its grants and an ExecTargetOnly
// target through this view too.
func WithFS(fsys pathresolve.FS, firmlinks []pathresolve.Firmlink) Option {
	return optionFunc(func(c *config) error {
		if fsys == nil {
			return errors.New("cage: WithFS needs a file system")
		}
		c.fs, c.firmlinks, c.fsSet = fsys, firmlinks, true
		return nil
	})
}

// WithHome sets the home directory the hard-deny classes protect
// (default: the policy's own, [profile.Home], else os.UserHomeDir). It
// must be absolute.
func WithHome(dir string) Option {
	return optionFunc(func(c *config) error {
		if err := pathresolve.CheckAbs(dir); err != nil {
			return err // a *pathresolve.PathError naming dir
		}
		c.home = dir
		return nil
	})
}

// WithPrivateTemp gives each run its own temporary directory, created
// under the real temporary directory (kernel spelling), granted read, write
// and execute for the run on every backend (a build runs what it linked
// there: go test's test binary), named by TMPDIR (unless Cmd.Env is set and names TMPDIR)
// and removed when the run ends, whatever modes the run left on the
// directories in it; a removal that still fails is reported by Wait
// ([ErrTempNotRemoved], with an *fs.PathError naming the directory).
func WithPrivateTemp() Option {
	return optionFunc(func(c *config) error { c.privateTemp = true; return nil })
}

// AcceptLink accepts policy paths and grants that resolve through the
// symbolic link at path (its kernel spelling, as the Path of a
// [*PolicyError] of kind [ErrSuspectLink] names it), which [New] and
// [Cmd.Start] otherwise refuse: a link inside a tree the policy grants
// that leads out of it, or one that leads to its own ancestor, is what a
// link planted by a caged child looks like.
func AcceptLink(path string) Option {
	return optionFunc(func(c *config) error {
		if err := pathresolve.CheckAbs(path); err != nil {
			return fmt.Errorf("cage: AcceptLink: %w", err)
		}
		c.links = append(c.links, path)
		return nil
	})
}

// acceptedLink reports whether the caller accepted link: case folded for
// Seatbelt, which compares names that way, exactly for Linux, whose file
// systems tell case variants apart (folding would accept another file).
func (c *config) acceptedLink(link string) bool {
	if c.backend != BackendMacOS {
		return slices.Contains(c.links, link)
	}
	return slices.ContainsFunc(c.links, func(l string) bool { return strings.EqualFold(l, link) })
}
