package cage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/procage-go/procage/preset"
	"github.com/procage-go/procage/profile"
)

// WithPresets adds what each preset grants on this host to the policy
// (read+exec of the toolchain's locations, fork; [preset.Preset.Rules]),
// so [Cage.Policy] and [Cage.Plan] show it, and gives each run a private
// temporary directory (as [WithPrivateTemp]) holding the presets' caches,
// each named by its variable ([preset.Preset.Caches]: GOCACHE,
// npm_config_cache, PIP_CACHE_DIR, ...) unless Cmd.Env is set and names
// it. The caches are removed with the directory when the run ends: the
// user's own caches are never written. On Linux, with a preset that runs
// what it builds (go test, cargo test, make check:
// [preset.Preset.RunsBuilt]), the run may also execute files in that
// directory.
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

// makeCaches creates the presets' caches in the run's private temporary
// directory dir and returns their variables.
func (c *config) makeCaches(dir string) ([]string, error) {
	var env []string
	for _, p := range c.presets {
		for _, cache := range p.Caches() {
			d := filepath.Join(dir, cache.Dir)
			if err := os.Mkdir(d, 0o700); err != nil && !os.IsExist(err) {
				return nil, err // an *fs.PathError naming the directory
			}
			env = append(env, cache.Env+"="+d)
		}
	}
	return env, nil
}

// tempExec reports whether a preset runs what it builds in the private
// temporary directory.
func (c *config) tempExec() bool {
	return slices.ContainsFunc(c.presets, preset.Preset.RunsBuilt)
}
