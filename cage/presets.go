package cage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/procage-go/procage/preset"
	"github.com/procage-go/procage/profile"
)

// WithPresets adds what each preset grants on this host to the policy
// (read+exec of the toolchain's locations, fork; [preset.Preset.Rules]),
// so [Cage.Policy] and [Cage.Plan] show it, and gives each run a private
// temporary directory (as [WithPrivateTemp]) and the presets' caches,
// each named by its variable ([preset.Preset.Caches]: GOCACHE,
// npm_config_cache, PIP_CACHE_DIR, ...) unless Cmd.Env is set and names
// it. The caches are the cage's: one directory under the real temporary
// directory, made by the first run and shared read-write by every run of
// the cage, concurrent ones too, until [Cage.Close] removes it (without
// Close it stays in os.TempDir). The user's own caches are never written.
func WithPresets(presets ...preset.Preset) Option {
	return optionFunc(func(c *config) error {
		for _, p := range presets {
			if _, err := preset.Parse(string(p)); err != nil {
				return fmt.Errorf("cage: WithPresets: %w", err)
			}
			c.presets = append(c.presets, p)
		}
		c.privateTemp = c.privateTemp || len(presets) > 0
		return nil
	})
}

// withPresets returns policy with the presets' options, discovered from
// the home directory the cage protects (WithHome, else the user's).
func (c *config) withPresets(policy profile.Policy) (profile.Policy, error) {
	if len(c.presets) == 0 {
		return policy, nil
	}
	home := c.home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	for _, p := range c.presets {
		var err error
		if policy, err = policy.With(p.Options(home, nil)...); err != nil {
			return policy, fmt.Errorf("cage: preset %s: %w", p, err)
		}
	}
	return policy, nil
}

// runs counts a cage's runs and holds its preset caches: one directory,
// made by the first run that needs it, shared by the cage's runs until
// Close. Every tool whose cache a preset names copes with concurrent
// runs: the Go build cache "is safe for concurrent invocations" (go help
// cache); cargo locks its package cache ("Blocking waiting for file lock
// on package cache"); npm's cacache writes content-addressed entries
// atomically (npm/cacache README); CPython writes each .pyc to a
// temporary name and renames it (importlib's _write_atomic). pip's HTTP
// cache has had races between concurrent pip processes (pypa/pip#12361):
// a corrupt entry makes pip download again.
type runs struct {
	mu     sync.Mutex
	active int    // started and not yet waited for
	closed bool   // Close succeeded
	dir    string // the caches' directory (kernel spelling); "" until made
	made   os.FileInfo
}

// errClosed: Start on a cage after Close.
var errClosed = errors.New("cage: the cage is closed")

// beginRun counts a run that is starting and returns the caches' grant
// and variables (none without a preset cache), making the directory and
// each cache in it as needed (a run may have removed one). endRun must
// follow, whether the run started or not.
func (c *Cage) beginRun() (*grant, []string, error) {
	r := &c.runs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, nil, errClosed
	}
	var caches []preset.Cache
	for _, p := range c.cfg.presets {
		caches = append(caches, p.Caches()...)
	}
	if len(caches) > 0 && r.dir == "" {
		base, err := realTempDir(c.cfg.backend)
		if err != nil {
			return nil, nil, err
		}
		dir, err := os.MkdirTemp(base, "procage-cache-")
		if err != nil {
			return nil, nil, err // an *fs.PathError naming the directory
		}
		if r.made, err = os.Lstat(dir); err != nil {
			os.Remove(dir)
			return nil, nil, err
		}
		r.dir = dir
	}
	var env []string
	for _, cache := range caches {
		d := filepath.Join(r.dir, cache.Dir)
		if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
			return nil, nil, err // an *fs.PathError naming the directory
		}
		env = append(env, cache.Env+"="+d)
	}
	r.active++
	if len(caches) == 0 {
		return nil, nil, nil
	}
	return &grant{path: r.dir, write: true, own: true}, env, nil
}

// endRun uncounts a run beginRun counted.
func (c *Cage) endRun() {
	c.runs.mu.Lock()
	c.runs.active--
	c.runs.mu.Unlock()
}

// Close ends the cage: it removes the presets' caches ([WithPresets]),
// whatever modes the runs left in them, and a later Start fails. Close
// refuses, changing nothing, while a run has not been waited for. A
// removal that fails is an error wrapping [ErrTempNotRemoved], with an
// *fs.PathError naming the directory. Closing again does nothing.
func (c *Cage) Close() error {
	r := &c.runs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.active > 0 {
		return fmt.Errorf("cage: Close: %d runs not waited for", r.active)
	}
	r.closed = true
	if r.dir == "" {
		return nil
	}
	dir := r.dir
	r.dir = ""
	return removeTemp(dir, r.made)
}
