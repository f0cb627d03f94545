package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/procage-go/procage/preset"
)

// presetFlag collects --preset NAME, checked as it is given.
type presetFlag []preset.Preset

func (l *presetFlag) String() string {
	s := make([]string, len(*l))
	for i, p := range *l {
		s[i] = string(p)
	}
	return strings.Join(s, ",")
}

func (l *presetFlag) Set(s string) error {
	p, err := preset.Parse(s)
	if err != nil {
		return err
	}
	*l = append(*l, p)
	return nil
}

// presetUsage is the --preset flag's help.
func presetUsage() string {
	var names []string
	for _, p := range preset.All() {
		names = append(names, string(p))
	}
	return "add what the toolchain preset `NAME` grants on this host (" + strings.Join(names, ", ") +
		": its usual locations read+exec, fork), give the run a private TMPDIR and private caches for the toolchain " +
		"(GOCACHE, npm, pip, CARGO_HOME), removed when the run ends (repeatable; docs/presets.md)"
}

// notePresets writes, for plan, what each preset found on this host, one
// line a rule, as the plan shows them among the policy's rules.
func notePresets(w io.Writer, cmd string, presets []preset.Preset, home string) {
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	for _, p := range presets {
		rules := p.Rules(home, nil)
		if len(rules) == 0 {
			fmt.Fprintf(w, "procage %s: preset %s: found nothing to grant on this host\n", cmd, p)
		}
		for _, r := range rules {
			fmt.Fprintf(w, "procage %s: preset %s: %s %s (%s)\n", cmd, p, r.Access, shellQuote(r.Path), r.Why)
		}
		if p.Forks() {
			fmt.Fprintf(w, "procage %s: preset %s: fork\n", cmd, p)
		}
		for _, c := range p.Caches() {
			fmt.Fprintf(w, "procage %s: preset %s: private %s, removed when the run ends\n", cmd, p, c.Env)
		}
	}
}

// dropCaches removes the presets' cache variables from env, so that an
// explicit environment (--env) does not keep the caller's caches out of
// the run (cage.WithPresets keeps a variable Cmd.Env names).
func dropCaches(env []string, presets []preset.Preset) []string {
	for _, p := range presets {
		for _, c := range p.Caches() {
			env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, c.Env+"=") })
		}
	}
	return env
}
