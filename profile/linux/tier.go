package linux

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/procage-go/procage/profile"
)

// Tier is how a Linux plan is enforced.
type Tier uint8

const (
	// TierT2 is Landlock and seccomp only (the zero value).
	TierT2 Tier = iota
	// TierT1 adds a mount namespace (and, unless the caller is root, a user
	// namespace): everything the plan does not grant write is on a
	// read-only mount, git directories in writable trees are pinned with
	// their payload read-only, and protected stores inside allowed trees
	// are covered by empty read-only mounts ([Plan.Mounts]).
	TierT1
)

func (t Tier) String() string {
	switch t {
	case TierT1:
		return "T1"
	case TierT2:
		return "T2"
	}
	return fmt.Sprintf("tier(%d)", uint8(t))
}

// what says what the tier enforces, for the plan's header.
func (t Tier) what() string {
	if t == TierT1 {
		return "Landlock, seccomp, mount and pid namespaces and, unless root, user namespace"
	}
	return "Landlock and seccomp"
}

// NetNamespace is a T1 run's own network namespace (network_namespaces(7)),
// entered with the user and mount namespaces: only the interfaces it
// brings up, no route to the host's, and its own abstract Unix socket
// names (unix(7): the abstract namespace is per network namespace).
type NetNamespace struct {
	// Loopback: the child brings its lo up (ioctl SIOCSIFFLAGS), so the
	// run's own 127.0.0.1 and ::1 work. Without it (network off) no
	// interface is up: every connect fails with ENETUNREACH.
	Loopback bool
	// HostPorts are the host's 127.0.0.1 ports the run reaches (loopback
	// mode's ports): the child listens on 127.0.0.1:PORT in its namespace
	// and hands the listener to the caller (SCM_RIGHTS, unix(7)), which
	// forwards each connection to the host's 127.0.0.1:PORT.
	HostPorts []uint16
	// Proxy: the child listens on a port of its 127.0.0.1 for the run's
	// egress proxy and hands the listener to the caller, which serves the
	// proxy on it: the only way out.
	Proxy bool
}

// String describes the namespace for the plan's text.
func (n *NetNamespace) String() string {
	if n == nil {
		return "the host's"
	}
	var parts []string
	switch {
	case !n.Loopback:
		parts = append(parts, "own, no interface up")
	default:
		parts = append(parts, "own, lo up")
	}
	if len(n.HostPorts) > 0 {
		ps := make([]string, len(n.HostPorts))
		for i, p := range n.HostPorts {
			ps[i] = fmt.Sprint(p)
		}
		parts = append(parts, "host 127.0.0.1 ports "+strings.Join(ps, ",")+" forwarded by the caller")
	}
	if n.Proxy {
		parts = append(parts, "only way out: the run's egress proxy, served by the caller on a listener in the namespace")
	}
	return strings.Join(parts, "; ")
}

// MountKind is what one of a T1 plan's mounts does.
type MountKind string

const (
	// MountReadOnly: the tree, with every mount beneath it, read-only
	// (mount_setattr AT_RECURSIVE, MOUNT_ATTR_RDONLY).
	MountReadOnly MountKind = "read-only"
	// MountWritable: a writable tree's own mount read-write again (mounts
	// beneath it stay read-only, a host read-only mount stays so).
	MountWritable MountKind = "writable"
	// MountGit: in a writable tree, each existing .git directory (and
	// worktrees/*/, submodules beneath modules/) and its ancestors are pinned by a
	// read-write self-bind (a mountpoint cannot be renamed), and the
	// existing payload (config, config.worktree, commondir, hooks/,
	// info/attributes) is bound read-only.
	MountGit MountKind = "git"
	// MountHide: a protected store, if it exists when the run starts, is
	// covered by an empty read-only mount (a tmpfs over a directory,
	// /dev/null over a file).
	MountHide MountKind = "hide"
)

// Mount is one entry of a T1 plan's mount layout, in the order the child
// makes them.
type Mount struct {
	Kind MountKind
	// Path is the kernel spelling of the tree or store.
	Path string
	// Why says what the mount is for.
	Why string `json:",omitempty"`
	// Prefix: the mount is made over every name in Path's directory that
	// begins with Path's last element (~/.gitconfig, ~/.gitconfig-work),
	// as each exists when the run starts.
	Prefix bool `json:",omitempty"`
}

// MountProtect: a trust-handoff file or tree (a shell startup file, say)
// inside a writable tree, if it exists when the run starts, is bound
// read-only, and its ancestors inside the tree are pinned.
const MountProtect MountKind = "protect"

// MountTmpfs: a private, empty, writable tmpfs (/tmp and /dev/shm when
// the run has a private temporary directory, each unless the policy or
// the spawn grants a path beneath it, or the run's working directory is
// there): files the host or another run keeps there are not visible, and
// the run's own vanish with it. The private temporary directory stays at
// its path (bound into the new /tmp).
const MountTmpfs MountKind = "tmpfs"

// MountProc: a fresh procfs of the run's own pid namespace on /proc: only
// the run's processes are in it. Readable only where the policy grants
// /proc (or beneath it): the grant's Landlock rule is added on the new
// mount ([Plan.MountRules]).
const MountProc MountKind = "proc"

// ErrProcAtT1 is wrapped by Lower's refusal of a policy that grants /proc
// on a T1 host that cannot mount a fresh one (Env.NoProcMount): the grant
// would be the host's /proc, every process's command line.
var ErrProcAtT1 = errors.New("the policy grants /proc, but this host cannot mount a private /proc (T1 without /proc)")

// mountOrder is the order the child makes the kinds in.
var mountOrder = []MountKind{MountReadOnly, MountWritable, MountGit, MountProtect, MountHide, MountTmpfs, MountProc}

// TmpfsPaths are the MountTmpfs paths, in order.
var TmpfsPaths = []string{"/dev/shm", "/tmp"}

// MountRules returns the Landlock rules for the mounts a T1 child makes
// itself (a rule on the covered directory does not apply to a mount on
// top of it): each of rules that lies within /proc, when the plan mounts
// a fresh /proc, and read, write and execute on the private /tmp (read
// and write on /dev/shm) when mounts has them. The child opens each path
// after its mount and adds the rule to its own ruleset.
func (pl *Plan) MountRules(rules []PathRule, mounts []Mount) []PathRule {
	var out []PathRule
	for _, m := range mounts {
		switch m.Kind {
		case MountTmpfs:
			a := fsRead | fsWrite
			if m.Path == "/tmp" {
				a |= FSExecute
			}
			out = append(out, PathRule{Path: m.Path, Access: a & pl.HandledFS, Layer: LayerTemp, Why: "the run's private " + m.Path})
		case MountProc:
			for _, r := range rules {
				if within(r.Path, "/proc") {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// MountsFor returns the T1 mount layout for rules (the plan's, or a
// spawn's from [Plan.WithSpawn]); none for a T2 plan.
func (pl *Plan) MountsFor(rules []PathRule) []Mount {
	if pl.Tier != TierT1 {
		return nil
	}
	hd := pl.hd
	if hd == nil {
		hd = &hardDeny{}
	}
	ms := t1Mounts(rules, hd, pl.trust)
	if pl.privTemp {
		for _, p := range TmpfsPaths {
			// Not over a path the policy grants (a project in /tmp).
			if !slices.ContainsFunc(rules, func(r PathRule) bool {
				return r.Layer != LayerBase && r.Layer != LayerTemp && r.Path != p && within(r.Path, p)
			}) {
				ms = append(ms, Mount{Kind: MountTmpfs, Path: p, Why: "the run's own, empty: what the host keeps there is not visible"})
			}
		}
	}
	if pl.procMount {
		why := "a fresh procfs of the run's pid namespace: only the run's processes (readable where the policy grants /proc)"
		if pl.RootMetadata() {
			why += "; read-only for root, since the modes of /proc's own files are the host's (one proc_dir_entry for every mount)"
		}
		ms = append(ms, Mount{Kind: MountProc, Path: "/proc", Why: why})
	}
	return ms
}

// RootMetadata reports a T1 plan for root: seccomp lets its mode, owner
// and extended-attribute changes through (in the writable trees, make,
// tar x and chmod +x need them), so nothing else the run reaches may be
// on a mount it can write: its /proc is mounted read-only (procfs keeps
// one proc_dir_entry, and so one mode, per file for every mount:
// fs/proc/generic.c proc_notify_change), and the descriptors the caller
// hands over are reopened through the run's read-only view, copied
// through a pipe, or refused (cage.Cmd.ExtraFiles).
func (pl *Plan) RootMetadata() bool { return pl.rootMeta }

// rootMetadataLifted is the one rule for both the seccomp rules and the
// spawn's handling of handed descriptors: only at T1 does nothing the run
// holds reach a host mount it can write, and only on a kernel that keeps
// the inodes of eventfd, epoll and pidfd descriptors (shared with other
// processes, on no mount of the run) from mode and owner changes.
func rootMetadataLifted(root bool, tier Tier, anonSetattr bool) bool {
	return root && tier == TierT1 && !anonSetattr
}

func t1Mounts(rules []PathRule, hd *hardDeny, trust bool) []Mount {
	ms := []Mount{{Kind: MountReadOnly, Path: "/", Why: "everything the plan does not grant write is read-only: mode, owner and time changes there fail with EROFS"}}
	seen := map[Mount]bool{}
	add := func(m Mount) {
		k := Mount{Kind: m.Kind, Path: m.Path, Prefix: m.Prefix}
		if !seen[k] {
			seen[k] = true
			ms = append(ms, m)
		}
	}
	for _, r := range rules {
		if r.Layer == LayerBase {
			continue
		}
		tree := r.Access&^FSFileRights != 0
		if r.Access&fsWrite != 0 {
			add(Mount{Kind: MountWritable, Path: r.Path, Why: "a writable tree: its own mount read-write again"})
			if trust && tree {
				add(Mount{Kind: MountGit, Path: r.Path, Why: "each existing .git pinned (a mountpoint cannot be renamed), its config, hooks, commondir and info/attributes read-only"})
			}
			for _, e := range hd.entries {
				if e.Class == profile.TrustHandoff && e.Path != "" && (e.Path == r.Path || tree && e.Inside(r.Path)) {
					add(Mount{Kind: MountProtect, Path: e.Path, Prefix: e.Prefix, Why: prefixed(e.Prefix, "a trust-handoff path, if it exists: read-only, its ancestors pinned")})
				}
			}
		}
		if r.Access&FSReadFile != 0 && tree {
			for _, e := range hd.entries {
				if e.Class == profile.Secrets && e.Path != "" && e.Inside(r.Path) {
					add(Mount{Kind: MountHide, Path: e.Path, Prefix: e.Prefix, Why: prefixed(e.Prefix, "a protected store, if it exists: covered by an empty read-only mount")})
				}
			}
		}
	}
	slices.SortStableFunc(ms, func(a, b Mount) int {
		if c := slices.Index(mountOrder, a.Kind) - slices.Index(mountOrder, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return ms
}

// prefixed says a prefix mount's why for every name it covers.
func prefixed(prefix bool, why string) string {
	if prefix {
		return "every name beginning with this one: " + why
	}
	return why
}

// t1Parts narrows a rule's hard-deny gap parts to what T1's mounts leave
// open: a protected store inside a tree the run can only read is covered
// (an empty read-only mount over what exists; what does not exist cannot
// be created there); inside a writable tree, and for trust handoff, the
// names that do not exist yet stay a gap (a mount needs an existing
// mountpoint, and Landlock rules only add access), except .git where the
// new-names supervisor runs (newNames): it refuses every new git name.
func t1Parts(parts []profile.GapPart, r PathRule, newNames bool) []profile.GapPart {
	var out []profile.GapPart
	for _, p := range parts {
		switch {
		case p.Class == profile.Secrets && r.Access&fsWrite == 0:
			continue
		case p.Class == profile.Secrets:
			p.Detail = fmt.Sprintf("secrets protects %s inside the writable tree %s; at T1 the stores that exist are hidden, "+
				"but a run can create one that does not exist (a mount needs an existing mountpoint)", listSome(p.Protected), r.Path)
		case p.Class == profile.TrustHandoff && newNames:
			p.Protected = slices.DeleteFunc(slices.Clone(p.Protected), func(n string) bool { return n == gitName })
			if len(p.Protected) == 0 {
				continue
			}
			p.Detail = fmt.Sprintf("trust-handoff protects %s inside the writable tree %s; at T1 existing startup files are read-only and the new-names supervisor refuses new git names, "+
				"but a run can create a startup file that does not exist yet", listSome(p.Protected), r.Path)
		case p.Class == profile.TrustHandoff:
			p.Detail = fmt.Sprintf("trust-handoff protects %s inside the writable tree %s; at T1 existing git payloads and startup files are read-only, "+
				"but a run can create names no mount covers (.git/commondir, .git/hooks where missing, a nested .git, git init, new startup files)", listSome(p.Protected), r.Path)
		}
		out = append(out, p)
	}
	return out
}
