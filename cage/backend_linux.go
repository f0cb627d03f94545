package cage

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile/linux"
)

// The Linux backend: Landlock and seccomp, applied by the child through
// internal/forkexec's calls (see linuxsandbox.NewCalls for the order). The
// ruleset and the seccomp program are built once per cage; a spawn with
// grants or a private temporary directory gets its own ruleset, built from
// the descriptors of the paths New opened plus the spawn's own.

const (
	hostBackend    = BackendLinux
	hostHasBackend = true
)

// hostOSBuild names the kernel: "Linux" and uname's release.
func hostOSBuild() string { return "Linux " + linuxsandbox.KernelRelease() }

// hostLandlockABI is the running kernel's Landlock ABI, which a PlanOnly
// cage plans for.
func hostLandlockABI() int { return linuxsandbox.KernelABI() }

// hostSandboxed: Landlock domains and seccomp filters stack, so an outer
// sandbox does not stop a cage from being built (the cage is then the
// intersection of both).
func hostSandboxed() (bool, error) { return false, nil }

// seatbeltCompiler: there is no libsandbox on Linux; a macOS plan is
// lowered only.
func seatbeltCompiler() (compiler, error) { return nil, nil }

// linuxBackend is a Linux cage's enforcing state.
type linuxBackend struct {
	plan *linux.Plan
	// held are the plan's path rules as New opened them, once, without
	// following links: every ruleset of the cage is built from them, so
	// a name a run changes later (a link planted where a policy path was
	// absent, or a directory swapped for one) is never looked up again.
	// They live as long as the cage (closed by their GC cleanup).
	held    *linuxsandbox.Handles
	rs      *linuxsandbox.Ruleset // the policy's ruleset, for spawns without grants
	prog    *linuxsandbox.Program
	calls   *linuxsandbox.Calls // the child's calls with rs; read-only, shared by spawns
	forking bool
}

// hostEnforce lowers the plan again for this kernel's Landlock ABI (so
// every right the kernel knows is handled), refuses a kernel older than the
// plan needs, opens the plan's paths and builds the ruleset and the seccomp
// program.
func hostEnforce(c *Cage, p planned) (backend, error) {
	lp, ok := p.(*linuxPlan)
	if !ok {
		return nil, fmt.Errorf("cage: BUG: linux backend given a %s plan", p.kind())
	}
	env := lp.env
	env.ABI = linuxsandbox.KernelABI()
	pl, err := linux.Lower(lp.policy, env)
	if err != nil {
		return nil, err
	}
	if err := linuxsandbox.CheckABI(pl); err != nil {
		return nil, &UnsupportedError{OSBuild: hostOSBuild(), What: "Landlock is too old for this policy", Err: err}
	}
	c.planned = &linuxPlan{plan: pl, policy: lp.policy, env: env}
	r := c.resolver
	if c.cfg.fsSet {
		// The policy's paths were resolved through WithFS's view; the base
		// paths are the host's.
		if r, err = pathresolve.NewHost(); err != nil {
			return nil, err
		}
	}
	held, err := linuxsandbox.OpenRules(pl.Rules, func(rule linux.PathRule) (string, error) { return c.spellRule(r, rule) })
	if err != nil {
		return nil, fmt.Errorf("cage: %w", err)
	}
	rs, err := linuxsandbox.BuildRuleset(pl, held)
	if err != nil {
		held.Close()
		return nil, fmt.Errorf("cage: %w", err)
	}
	prog, err := linuxsandbox.BuildProgram(pl)
	if err != nil {
		held.Close()
		rs.Close()
		return nil, fmt.Errorf("cage: %w", err)
	}
	calls, err := linuxsandbox.NewCallsSignaling(pl, rs, prog, pl.Rules, signalPID())
	if err != nil {
		held.Close()
		rs.Close()
		return nil, fmt.Errorf("cage: %w", err)
	}
	return &linuxBackend{plan: pl, held: held, rs: rs, prog: prog, calls: calls, forking: pl.Forking}, nil
}

// spellRule returns the spelling New opens for a rule of the plan. A
// policy path is already the kernel spelling resolve checked for links. A
// base path is resolved here, through r, and checked the same way against
// the policy's writable trees: /bin is a link to usr/bin on merged-/usr
// systems and /etc/resolv.conf often one into /run, the system's own, but a
// link a run planted at /usr/local/lib in a writable /usr/local is refused.
// (A read-only tree holding such a system link, Read("/etc") say, is no
// reason to refuse a base path the policy did not name.) The spelling has
// no link in it, and is opened without following one.
func (c *Cage) spellRule(r *pathresolve.Resolver, rule linux.PathRule) (string, error) {
	if rule.Layer != linux.LayerBase {
		return rule.Path, nil
	}
	res, err := r.Resolve(rule.Path)
	if err != nil {
		return "", err // a *pathresolve.PathError naming the path
	}
	write := rule.Access&^(linux.FSReadFile|linux.FSReadDir|linux.FSExecute) != 0
	writable := slices.DeleteFunc(slices.Clone(c.trees), func(t pathresolve.Tree) bool { return !t.Writable })
	if err := pathresolve.CheckLinks(res, write, writable, c.cfg.acceptedLink); err != nil {
		return "", err
	}
	return res.Path, nil
}

func (b *linuxBackend) probe(bool) error { return probeLinux() }

func (b *linuxBackend) child(s *spawnSpec) (*childSpec, error) {
	if len(s.grants) == 0 && b.rs.FD() >= s.keptFD {
		return childSpecOf(b.calls, nil), nil
	}
	rs, rules := b.rs, b.plan.Rules
	var owned []*linuxsandbox.Ruleset
	cleanup := func() {
		for _, o := range owned {
			o.Close()
		}
	}
	if len(s.grants) > 0 {
		// Grants and the private temporary directory: this spawn's own
		// ruleset, the policy's rules re-added from the descriptors New
		// opened, the spawn's own opened here, once, without following
		// links (resolveGrants checked their resolution for links).
		var gs []linux.SpawnGrant
		for _, g := range s.grants {
			if g.path == s.temp && g.write {
				continue // the private temporary directory: its own layer
			}
			// A file grant (a terminal) is no tree that could hold a
			// protected path; one that cannot be looked at counts as a tree.
			fi, err := os.Stat(g.path)
			gs = append(gs, linux.SpawnGrant{Path: g.path, Write: g.write, Dir: err != nil || fi.IsDir()})
		}
		var err error
		if rules, err = b.plan.WithSpawn(gs, s.temp); err != nil {
			return nil, err
		}
		if s.tempExec {
			// go test and cargo test run the binaries they build there.
			for i := range rules {
				if rules[i].Layer == linux.LayerTemp {
					rules[i].Access |= linux.FSExecute & b.plan.HandledFS
				}
			}
		}
		own := slices.DeleteFunc(slices.Clone(rules), func(r linux.PathRule) bool {
			return r.Layer == linux.LayerBase || r.Layer == linux.LayerPolicy
		})
		spawnHeld, err := linuxsandbox.OpenRules(own, nil)
		if err != nil {
			return nil, fmt.Errorf("cage: %w", err)
		}
		rs, err = linuxsandbox.BuildRuleset(b.plan, b.held, spawnHeld)
		spawnHeld.Close() // the ruleset holds the inodes now
		if err != nil {
			return nil, fmt.Errorf("cage: %w", err)
		}
		owned = append(owned, rs)
	}
	if rs.FD() < s.keptFD {
		// The child's descriptor shuffle would overwrite it before
		// landlock_restrict_self.
		d, err := rs.DupAbove(s.keptFD)
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("cage: %w", err)
		}
		owned = append(owned, d)
		rs = d
	}
	calls, err := linuxsandbox.NewCallsSignaling(b.plan, rs, b.prog, rules, signalPID())
	if err != nil {
		cleanup()
		return nil, fmt.Errorf("cage: %w", err)
	}
	return childSpecOf(calls, cleanup), nil
}

func childSpecOf(calls *linuxsandbox.Calls, cleanup func()) *childSpec {
	cs := &childSpec{calls: calls.Calls, keep: calls, cleanup: cleanup,
		name: func(se *forkexec.StepError) string { return calls.Name(se.Step, se.Call) }}
	if pidNamespace {
		cs.namespaces, cs.mountProc = runNamespaces(), true
	}
	return cs
}

// pidNamespace is tier T1's run lifetime, off until T1 turns it on: each
// run gets its own pid namespace (a pid 1 that reaps the run's orphans,
// ends the run with the target and dies with the caller) and a fresh
// /proc in its own mount namespace. Landlock needs a rule for that /proc
// (a rule on the host's does not cover the new mount), added at
// forkexec.StepPID, which T1 brings.
var pidNamespace = false

// signalPID is the process the child's signal-scoping confirmation
// signals: the caller, or in a pid namespace (where the caller has no
// pid) its pid 1, which is outside the run's Landlock domain.
func signalPID() int {
	if pidNamespace {
		return 1
	}
	return os.Getpid()
}

// runNamespaces: the pid and mount namespaces must be owned by a user
// namespace the caller owns; root's own (the initial one) will do.
func runNamespaces() uintptr {
	f := uintptr(syscall.CLONE_NEWPID | syscall.CLONE_NEWNS)
	if os.Geteuid() != 0 {
		f |= syscall.CLONE_NEWUSER
	}
	return f
}

// endRun: a forking run's processes cannot leave the child's process
// group (seccomp refuses setsid and setpgid), so killing the group in
// rounds ends all of them, and only them. A non-forking run has no other
// process (seccomp refuses fork).
func (b *linuxBackend) endRun(r *run, _ bool) error {
	if !b.forking {
		return nil
	}
	return endGroup(r.pid)
}

// probeLinux checks once per process (verdicts only) that the in-child
// apply works: a child of true under a plan that allows nothing must be
// refused at exec with EACCES.
var probeLinux = cachedVerdict(func() error {
	build := hostOSBuild()
	if abi := linuxsandbox.KernelABI(); abi == 0 {
		return &UnsupportedError{OSBuild: build, What: "Landlock is not available", Err: &linuxsandbox.ABIError{Kernel: linuxsandbox.KernelRelease(), Need: 1}}
	}
	pl := linux.DenyAll(linuxsandbox.KernelABI())
	rs, err := linuxsandbox.BuildRuleset(pl)
	if err != nil {
		return &UnsupportedError{OSBuild: build, What: "building the probe's Landlock ruleset", Err: err}
	}
	defer rs.Close()
	prog, err := linuxsandbox.BuildProgram(pl)
	if err != nil {
		return &UnsupportedError{OSBuild: build, What: "building the probe's seccomp program", Err: err}
	}
	calls, err := linuxsandbox.NewCalls(pl, rs, prog, nil)
	if err != nil {
		return fmt.Errorf("cage: preparing the apply probe: %w", err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	fd := null.Fd()
	target := "/bin/true"
	if _, err := os.Stat(target); err != nil {
		target = "/usr/bin/true"
	}
	pid, err := forkexec.Start(&forkexec.Attr{Path: target, Args: []string{"true"}, Files: []uintptr{fd, fd, fd}, Calls: calls.Calls})
	calls.KeepAlive()
	if err == nil {
		ws, _ := forkexec.Wait(pid)
		return &UnsupportedError{OSBuild: build, What: fmt.Sprintf("the apply probe's child ran its target under a deny-everything ruleset (exit status %d)", ws.ExitStatus())}
	}
	se, ok := errors.AsType[*forkexec.StepError](err)
	switch {
	case !ok:
		return fmt.Errorf("cage: starting the apply probe: %w", err)
	case se.Step == forkexec.StepExec && se.Err == syscall.EACCES:
		return nil
	}
	what := se.Step.String()
	if n := calls.Name(se.Step, se.Call); n != "" {
		what += " (" + n + ")"
	}
	return &UnsupportedError{OSBuild: build, What: "apply probe: child failed " + what + ", not exec with EACCES", Err: err}
})

func hostProbeApply() error { return probeLinux() }

// hostProbeRuns: a run's processes are found as its process group, which
// needs no query; seccomp keeps them in it (every forking plan denies
// setsid and setpgid), which the tests check on a live run.
func hostProbeRuns() error { return nil }
