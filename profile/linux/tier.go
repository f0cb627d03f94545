package linux

import "fmt"

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
	// worktrees/*/, modules/*/) and its ancestors are pinned by a
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
}
