package cage

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/internal/linuxsandbox"
	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
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
	// gitDirs are the git directories found beneath the policy's writable
	// trees when New ran (T1 pins those still there at each spawn).
	gitDirs []string
	// ownRuleset: the plan's own mounts (a fresh /proc, a private /tmp)
	// have Landlock rules the child adds, so each T1 spawn needs a
	// ruleset of its own.
	ownRuleset bool
	// superviseTrees: the plan's own rules hold a writable tree that the
	// new-names supervisor serves (linux.Plan.SupervisesNewNames).
	superviseTrees bool
	// procMount: at T1 each run gets a fresh /proc in its pid namespace
	// (off where the probe found the proc mount refused).
	procMount bool
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
	calls, err := linuxsandbox.NewCallsSignaling(pl, rs, prog, pl.Rules, signalPID(pl.Tier))
	if err != nil {
		held.Close()
		rs.Close()
		return nil, fmt.Errorf("cage: %w", err)
	}
	be := &linuxBackend{plan: pl, held: held, rs: rs, prog: prog, calls: calls, forking: pl.Forking,
		procMount: pl.Tier == linux.TierT1 && !env.NoProcMount}
	be.gitDirs = findGitDirs(pl.Mounts)
	if pl.Tier == linux.TierT1 {
		be.ownRuleset = len(pl.MountRules(pl.Rules, pl.MountsFor(pl.Rules))) > 0
		be.superviseTrees = pl.SupervisesNewNames(pl.Rules)
	}
	return be, nil
}

// findGitDirs walks the T1 mounts' writable trees that keep git safe for
// their git directories.
func findGitDirs(ms []linux.Mount) []string {
	var out []string
	for _, m := range ms {
		if m.Kind == linux.MountGit {
			dirs, _ := linuxsandbox.FindGitDirs(m.Path)
			out = append(out, dirs...)
		}
	}
	return out
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
	t1 := b.plan.Tier == linux.TierT1
	cs, rules, rs, nn, err := b.landlockChild(s, b.ownRuleset)
	if err != nil || !t1 {
		return cs, err
	}
	// T1: this spawn's namespace calls (their fd slots are its own).
	gitDirs := b.gitDirs
	for _, g := range s.grants {
		if g.write && g.path != s.temp {
			dirs, _ := linuxsandbox.FindGitDirs(g.path)
			gitDirs = append(gitDirs, dirs...)
		}
	}
	mounts := slices.DeleteFunc(b.plan.MountsFor(rules), func(m linux.Mount) bool {
		// The working directory must stay reachable.
		return m.Kind == linux.MountTmpfs && s.dir != "" && (s.dir == m.Path || strings.HasPrefix(s.dir, m.Path+"/")) &&
			(s.temp == "" || !(s.dir == s.temp || strings.HasPrefix(s.dir, s.temp+"/")))
	})
	ns := &linuxsandbox.Namespace{UserNS: os.Geteuid() != 0, UID: os.Geteuid(), GID: os.Getegid(),
		Dir: s.dir, Mounts: mounts, GitDirs: gitDirs}
	if s.temp != "" {
		ns.Keep = []string{s.temp}
	}
	for _, r := range s.reopen {
		ns.Reopen = append(ns.Reopen, linuxsandbox.Reopen{FD: r.fd, Path: r.path, Flags: r.flags, Dev: r.dev, Rdev: r.rdev})
	}
	ns.ProcReadOnly = b.procMount && b.plan.RootMetadata()
	fail := func(err error) (*childSpec, error) {
		if ns.Net != nil {
			ns.Net.Close()
		}
		if cs.cleanup != nil {
			cs.cleanup()
		}
		return nil, fmt.Errorf("cage: %w", err)
	}
	if nn := b.plan.NetNS; nn != nil {
		// The run's own network namespace: lo, and the listeners the
		// caller serves (the proxy's, or the forwarded host ports).
		ports := nn.HostPorts
		if nn.Proxy {
			if s.proxyPort <= 0 || s.proxyPort > 65535 {
				return fail(fmt.Errorf("BUG: proxy mode without the run's proxy port"))
			}
			ports = []uint16{uint16(s.proxyPort)}
		}
		if ns.Net, err = linuxsandbox.NewNetNS(nn.Loopback, ports, s.keptFD); err != nil {
			return fail(err)
		}
	}
	nsCalls, err := linuxsandbox.NamespaceCalls(ns)
	if err != nil {
		return fail(err)
	}
	calls := nsCalls
	mr := b.plan.MountRules(rules, mounts)
	if len(mr) > 0 {
		if rs == b.rs {
			return fail(errors.New("BUG: a T1 spawn with mount rules has no ruleset of its own"))
		}
		calls = linuxsandbox.Join(calls, linuxsandbox.MountRuleCalls(rs, mr, b.plan.HandledFS))
	}
	if nn != nil {
		var own []string
		for _, g := range s.grants {
			if g.own {
				own = append(own, g.path)
			}
		}
		exempt := exemptRoots(mounts, append(slices.Clone(ns.Keep), own...))
		if err := nn.SetExempt(exempt); err != nil {
			return fail(err)
		}
		calls = linuxsandbox.Join(calls, nn.MountRuleCalls(mr, b.plan.HandledFS))
	}
	calls = linuxsandbox.Join(calls, cs.keep.(*linuxsandbox.Calls))
	cleanup := cs.cleanup
	if n := ns.Net; n != nil {
		cleanup = func() {
			n.Close() // the parent's copies of what the child needed
			if cs.cleanup != nil {
				cs.cleanup()
			}
		}
	}
	out := childSpecOf(calls, cleanup)
	if n := ns.Net; n != nil && len(n.Ports) > 0 {
		out.handoff = n.Receive
	}
	out.pidNamespace, out.mountProc = true, b.procMount
	return out, nil
}

// landlockChild is a spawn's Landlock and seccomp calls, the rules its
// ruleset holds and the ruleset: this spawn's own if it has grants, a
// proxy port or own is set.
//
// At T1 with the new-names supervisor (linux.Plan.NewNames) a spawn with
// a writable tree gets its own ruleset and, for the supervisor, a second
// one (nn.Outer) with the same rules.
func (b *linuxBackend) landlockChild(s *spawnSpec, own bool) (*childSpec, []linux.PathRule, *linuxsandbox.Ruleset, *linuxsandbox.NewNames, error) {
	supervise := b.superviseTrees ||
		b.plan.NewNames && slices.ContainsFunc(s.grants, func(g grant) bool { return g.write && g.path != s.temp })
	if len(s.grants) == 0 && s.proxyPort == 0 && !own && !supervise && b.rs.FD() >= s.keptFD {
		return childSpecOf(b.calls, nil), b.plan.Rules, b.rs, nil, nil
	}
	plan := b.plan
	if s.proxyPort != 0 && b.plan.HandledNet != 0 {
		// Proxy mode: this spawn's ruleset also lets TCP connect to the
		// run's proxy port (at T2 the only confinement, with the gap
		// network-proxy-direct accepted; at T1 a second layer where the
		// kernel has TCP rights, ABI 4: below it the namespace alone).
		pp := *b.plan
		pp.NetRules = append(slices.Clone(pp.NetRules), linux.NetRule{Port: uint16(s.proxyPort), Access: linux.NetConnectTCP})
		plan = &pp
	}
	rs, rules := b.rs, b.plan.Rules
	var (
		owned []*linuxsandbox.Ruleset
		outer *linuxsandbox.Ruleset
		nn    *linuxsandbox.NewNames
	)
	cleanup := func() {
		if nn != nil {
			nn.Close()
		}
		for _, o := range owned {
			o.Close()
		}
	}
	if len(s.grants) > 0 || s.proxyPort != 0 || own || supervise {
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
			gs = append(gs, linux.SpawnGrant{Path: g.path, Write: g.write, Dir: err != nil || fi.IsDir(), Own: g.own})
		}
		var err error
		if rules, err = b.plan.WithSpawn(gs, s.temp); err != nil {
			return nil, nil, nil, nil, err
		}
		own := slices.DeleteFunc(slices.Clone(rules), func(r linux.PathRule) bool {
			return r.Layer == linux.LayerBase || r.Layer == linux.LayerPolicy
		})
		spawnHeld, err := linuxsandbox.OpenRules(own, nil)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("cage: %w", err)
		}
		rs, err = linuxsandbox.BuildRuleset(plan, b.held, spawnHeld)
		if err == nil {
			owned = append(owned, rs)
			if supervise {
				if outer, err = linuxsandbox.BuildRuleset(plan, b.held, spawnHeld); err == nil {
					owned = append(owned, outer)
				}
			}
		}
		spawnHeld.Close() // the rulesets hold the inodes now
		if err != nil {
			cleanup()
			return nil, nil, nil, nil, fmt.Errorf("cage: %w", err)
		}
	}
	// The child's descriptor shuffle would overwrite a ruleset below
	// keptFD before landlock_restrict_self.
	for _, r := range []**linuxsandbox.Ruleset{&rs, &outer} {
		if *r == nil || (*r).FD() >= s.keptFD {
			continue
		}
		d, err := (*r).DupAbove(s.keptFD)
		if err != nil {
			cleanup()
			return nil, nil, nil, nil, fmt.Errorf("cage: %w", err)
		}
		owned = append(owned, d)
		*r = d
	}
	if supervise {
		var err error
		if nn, err = linuxsandbox.NewSpawnNames(outer, s.keptFD); err != nil {
			cleanup()
			return nil, nil, nil, nil, fmt.Errorf("cage: %w", err)
		}
	}
	calls, err := linuxsandbox.NewCallsSupervised(plan, rs, b.prog, rules, signalPID(plan.Tier), nn)
	if err != nil {
		cleanup()
		return nil, nil, nil, nil, fmt.Errorf("cage: %w", err)
	}
	return childSpecOf(calls, cleanup), rules, rs, nn, nil
}

// exemptRoots are the mounts where the new-names supervisor's deny list
// does not apply, since nothing outside the run trusts a name there: the
// run's private tmpfs mounts, and of dirs (its TMPDIR, the cage's own
// preset caches) those that are mounts of their own, bound into a private
// tmpfs or a writable mount of their own, but never one inside a writable
// tree of the policy's (the user's tree would hold the run's repositories
// while it runs) nor a host mount they merely lie on.
func exemptRoots(mounts []linux.Mount, dirs []string) []string {
	var tmpfs []string
	for _, m := range mounts {
		if m.Kind == linux.MountTmpfs {
			tmpfs = append(tmpfs, m.Path)
		}
	}
	exempt := slices.Clone(tmpfs)
	for _, d := range dirs {
		inTree, ownMount := false, false
		for _, m := range mounts {
			if m.Kind == linux.MountWritable {
				inTree = inTree || m.Path != d && strings.HasPrefix(d, m.Path+"/")
				ownMount = ownMount || m.Path == d
			}
		}
		inTmpfs := slices.ContainsFunc(tmpfs, func(t string) bool { return strings.HasPrefix(d, t+"/") })
		if !inTree && (inTmpfs || ownMount) {
			exempt = append(exempt, d)
		}
	}
	return exempt
}

func childSpecOf(calls *linuxsandbox.Calls, cleanup func()) *childSpec {
	return &childSpec{calls: calls.Calls, keep: calls, cleanup: cleanup,
		name: func(se *forkexec.StepError) string { return calls.Name(se.Step, se.Call) }}
}

// signalPID is the process the child's signal-scoping confirmation
// signals: the caller, or at T1, in the run's pid namespace (where the
// caller has no pid), its pid 1, which is outside the run's Landlock
// domain.
func signalPID(t linux.Tier) int {
	if t == linux.TierT1 {
		return 1
	}
	return os.Getpid()
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
	rs, prog, err := probeFilters(pl, "the probe's")
	if err != nil {
		return err
	}
	defer rs.Close()
	calls, err := linuxsandbox.NewCalls(pl, rs, prog, nil)
	if err != nil {
		return fmt.Errorf("cage: preparing the apply probe: %w", err)
	}
	attr, null, err := probeAttr(calls)
	if err != nil {
		return err
	}
	defer null.Close()
	pid, err := forkexec.Start(attr)
	calls.KeepAlive()
	if err == nil {
		ws, _ := forkexec.Wait(pid)
		return probeRan("the apply probe's", ws)
	}
	se, err := probeRefused("the apply probe", err)
	if se == nil {
		return err
	}
	what := se.Step.String()
	if n := calls.Name(se.Step, se.Call); n != "" {
		what += " (" + n + ")"
	}
	return &UnsupportedError{OSBuild: build, What: "apply probe: child failed " + what + ", not exec with EACCES", Err: se}
})

func hostProbeApply() error { return probeLinux() }

// hostProbeRuns: a run's processes are found as its process group, which
// needs no query; seccomp keeps them in it (every forking plan denies
// setsid and setpgid), which the tests check on a live run.
func hostProbeRuns() error { return nil }

// hostProbeT1 runs every T1 step once per process (verdicts only) in a
// throwaway child: the user namespace (unless root) and its id maps, the
// network namespace with lo up, mount propagation, the read-only root, a writable bind made read-write again,
// an empty read-only tmpfs and a /dev/null bind over a store, then the
// apply calls of a plan that allows nothing, under which exec must fail
// with EACCES. Where a step fails (Ubuntu 24.04's AppArmor restriction
// lets unshare succeed and fails a later step; Docker's default seccomp
// profile refuses unshare), the result is an *UnsupportedError wrapping
// the *ApplyError that names the step.
var hostProbeT1 = cachedVerdict(func() error {
	if hostProbeT1Proc() == nil {
		return nil
	}
	return probeT1(false, false)
})

// hostProbeT1Proc is the T1 probe with the run's fresh /proc mounted in its
// pid namespace: a container's masked /proc refuses that mount (the
// kernel's mount_too_revealing), which makes the host "T1 without /proc".
var hostProbeT1Proc = cachedVerdict(func() error { return probeT1(true, false) })

// hostProbeNewNames says why a T1 run's new names are not supervised
// here (linuxsandbox.NewNamesAvailable, or the T1 probe with the
// supervisor failing a step), nil where they are. It needs T1 with the
// run's own /proc.
var hostProbeNewNames = cachedVerdict(func() error {
	if err := hostProbeT1Proc(); err != nil {
		return err
	}
	if err := linuxsandbox.NewNamesAvailable(); err != nil {
		return &UnsupportedError{OSBuild: hostOSBuild(), What: "no new-names supervisor", Err: err}
	}
	return probeT1(true, true)
})

// hostNewNames reports a host whose T1 runs supervise new names.
func hostNewNames() bool { return hostProbeNewNames() == nil }

// hostAnonInodeSetattr reports a kernel that lets root's metadata calls
// reach inodes other processes share (linuxsandbox.AnonInodeSetattr);
// asked only for root, the one caller whose plan it changes.
func hostAnonInodeSetattr() bool { return os.Geteuid() == 0 && linuxsandbox.AnonInodeSetattr() }

// hostProbeProc says why T1 runs get no /proc of their own here: nil
// where the proc mount works (or T1 is unavailable altogether).
func hostProbeProc() error {
	if hostProbeT1() != nil {
		return nil
	}
	return hostProbeT1Proc()
}

// procMountCall names the fresh /proc mount of StepPID in a probe's error.
const procMountCall = "mount proc on /proc"

// probeT1 runs the T1 steps once in a throwaway child in its
// own pid namespace, with a fresh /proc if mountProc, and with the
// new-names supervisor (which needs that /proc) if supervise: the child
// must pass the supervisor's confirmation before exec is refused.
func probeT1(mountProc, supervise bool) error {
	build := hostOSBuild()
	if err := probeLinux(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "procage-t1-probe-")
	if err != nil {
		return fmt.Errorf("cage: T1 probe: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := os.Mkdir(dir+"/d", 0o700); err != nil {
		return fmt.Errorf("cage: T1 probe: %w", err)
	}
	if err := os.WriteFile(dir+"/f", nil, 0o600); err != nil {
		return fmt.Errorf("cage: T1 probe: %w", err)
	}
	// The network namespace with lo up: Ubuntu's AppArmor restriction of
	// unprivileged user namespaces fails bringing lo up
	// (openai/codex#15057), and then T1 is unavailable as a whole (TierAuto
	// falls back to T2, a required T1 is refused naming the step).
	netns, err := linuxsandbox.NewNetNS(true, nil, 0)
	if err != nil {
		return fmt.Errorf("cage: T1 probe: %w", err)
	}
	defer netns.Close()
	ns, err := linuxsandbox.NamespaceCalls(&linuxsandbox.Namespace{UserNS: os.Geteuid() != 0, UID: os.Geteuid(), GID: os.Getegid(),
		Net: netns, Mounts: []linux.Mount{{Kind: linux.MountReadOnly, Path: "/"}, {Kind: linux.MountWritable, Path: dir},
			{Kind: linux.MountHide, Path: dir + "/d"}, {Kind: linux.MountHide, Path: dir + "/f"}}})
	if err != nil {
		return fmt.Errorf("cage: T1 probe: %w", err)
	}
	pl := linux.DenyAll(linuxsandbox.KernelABI())
	pl.Tier = linux.TierT1
	rs, prog, err := probeFilters(pl, "the T1 probe's")
	if err != nil {
		return err
	}
	defer rs.Close()
	attr, null, err := probeAttr(&linuxsandbox.Calls{})
	if err != nil {
		return err
	}
	defer null.Close()
	var nn *linuxsandbox.NewNames
	if supervise {
		outer, err := linuxsandbox.BuildRuleset(pl)
		if err != nil {
			return &UnsupportedError{OSBuild: build, What: "building the supervisor probe's Landlock ruleset", Err: err}
		}
		defer outer.Close()
		if nn, err = linuxsandbox.NewSpawnNames(outer, forkexec.KeptAbove(attr.Files)); err != nil {
			return &UnsupportedError{OSBuild: build, What: "preparing the new-names supervisor", Err: err}
		}
		defer nn.Close()
		ns = linuxsandbox.Join(ns, nn.MountRuleCalls(nil, pl.HandledFS))
	}
	apply, err := linuxsandbox.NewCallsSupervised(pl, rs, prog, nil, 1, nn)
	if err != nil {
		return fmt.Errorf("cage: preparing the T1 probe: %w", err)
	}
	calls := linuxsandbox.Join(ns, apply)
	attr.Calls = calls.Calls
	attr.PIDNamespace, attr.MountProc = true, mountProc
	pr, err := forkexec.StartProc(attr)
	calls.KeepAlive()
	if err == nil {
		ws, _ := pr.Wait()
		return probeRan("the T1 probe's", ws)
	}
	se, err := probeRefused("the T1 probe", err)
	if se == nil {
		return err
	}
	ae := &ApplyError{Step: Step(se.Step), Call: calls.Name(se.Step, se.Call), Errno: se.Err}
	if mountProc && se.Step == forkexec.StepPID {
		// StepPID's own action (call 0) is the pid namespace and, here, the
		// proc mount; the result is shown only where the same probe
		// without the mount passed (hostProbeProc), so it names the mount.
		if se.Call == 0 {
			ae.Call = procMountCall
		}
		return &UnsupportedError{OSBuild: build, What: "no private /proc at tier T1 (the proc mount in a new pid namespace is refused)", Err: ae}
	}
	if supervise {
		return &UnsupportedError{OSBuild: build, What: "no new-names supervisor (its probe failed a step)", Err: ae}
	}
	return &UnsupportedError{OSBuild: build, What: "tier T1 unavailable", Err: ae}
}

// probeFilters builds the Landlock ruleset and the seccomp program of a
// probe's deny-everything plan; whose names the probe in the error.
func probeFilters(pl *linux.Plan, whose string) (*linuxsandbox.Ruleset, *linuxsandbox.Program, error) {
	rs, err := linuxsandbox.BuildRuleset(pl)
	if err != nil {
		return nil, nil, &UnsupportedError{OSBuild: hostOSBuild(), What: "building " + whose + " Landlock ruleset", Err: err}
	}
	prog, err := linuxsandbox.BuildProgram(pl)
	if err != nil {
		rs.Close()
		return nil, nil, &UnsupportedError{OSBuild: hostOSBuild(), What: "building " + whose + " seccomp program", Err: err}
	}
	return rs, prog, nil
}

// probeAttr starts a probe's child as true with /dev/null for its
// standard files and calls applied before exec; the caller closes null
// once the child is started.
func probeAttr(calls *linuxsandbox.Calls) (attr *forkexec.Attr, null *os.File, err error) {
	null, err = os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := null.Fd()
	target := "/bin/true"
	if _, err := os.Stat(target); err != nil {
		target = "/usr/bin/true"
	}
	return &forkexec.Attr{Path: target, Args: []string{"true"}, Files: []uintptr{fd, fd, fd}, Calls: calls.Calls}, null, nil
}

// probeRan is a probe's verdict when its child ran true although the
// plan allows nothing: the apply calls did not confine it.
func probeRan(whose string, ws syscall.WaitStatus) error {
	return &UnsupportedError{OSBuild: hostOSBuild(), What: fmt.Sprintf("%s child ran its target under a deny-everything ruleset (exit status %d)", whose, ws.ExitStatus())}
}

// probeRefused sorts a probe child's start error: exec refused with
// EACCES is the pass (nil, nil); an error that names no step is
// returned as it is; otherwise the *forkexec.StepError, for the caller
// to say which step failed.
func probeRefused(probe string, err error) (*forkexec.StepError, error) {
	se, ok := errors.AsType[*forkexec.StepError](err)
	switch {
	case !ok:
		return nil, fmt.Errorf("cage: starting %s: %w", probe, err)
	case se.Step == forkexec.StepExec && se.Err == syscall.EACCES:
		return nil, nil
	}
	return se, nil
}

// hostPolicyProbe lowers the default policy (Base V1 alone) for this
// kernel, so the probe says what New will do with it: on a kernel whose
// Landlock ABI is older than the plan needs (Debian 12's 6.1 has ABI 2,
// the process-access scopes need 6), New refuses.
func hostPolicyProbe() error {
	pol, err := profile.New(profile.BaseV1)
	if err != nil {
		return err
	}
	tier := linux.TierT2
	if hostProbeT1() == nil {
		tier = linux.TierT1
	}
	pl, err := linux.Lower(pol, linux.Env{ABI: linuxsandbox.KernelABI(), Root: os.Geteuid() == 0, Tier: tier, NoProcMount: hostProbeProc() != nil, AnonInodeSetattr: hostAnonInodeSetattr(), NewNames: hostNewNames()})
	if err != nil {
		return err
	}
	if err := linuxsandbox.CheckABI(pl); err != nil {
		return &UnsupportedError{OSBuild: hostOSBuild(), What: "Landlock is too old for the default policy (waive process-access to run here)", Err: err}
	}
	return nil
}
