package linuxsandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/profile/linux"
)

// Tier T1: before the Landlock and seccomp calls, the child enters a mount
// namespace (and, unless it is root, a user namespace mapping its own ids
// 1:1) and rearranges its view of the file system with raw calls at
// forkexec.StepNamespace: everything read-only, the writable trees back to
// read-write, the git directories inside them pinned with their payload
// read-only, and the protected stores inside allowed trees covered by an
// empty read-only mount. Every path is opened in the child without
// following a link (openat2 RESOLVE_NO_SYMLINKS) after the namespace
// exists, and its (dev, ino) must be what the parent recorded: a rename or
// link swapped in since fails the spawn (ESTALE), never binds elsewhere.
// Mounts are made by descriptor (open_tree, move_mount, mount_setattr:
// mount_setattr(2), open_tree(2), move_mount(2)), so no name is looked up
// twice.

// Mount API constants (include/uapi/linux/mount.h, fcntl.h).
const (
	atRecursive         = 0x8000 // AT_RECURSIVE
	atEmptyPath         = 0x1000 // AT_EMPTY_PATH
	openTreeClone       = 0x1    // OPEN_TREE_CLONE
	moveMountFEmptyPath = 0x4    // MOVE_MOUNT_F_EMPTY_PATH
	moveMountTEmptyPath = 0x40   // MOVE_MOUNT_T_EMPTY_PATH
	mountAttrRdonly     = 0x1    // MOUNT_ATTR_RDONLY
	mountAttrNosuid     = 0x2    // MOUNT_ATTR_NOSUID
	mountAttrNodev      = 0x4    // MOUNT_ATTR_NODEV
	mountAttrNoexec     = 0x8    // MOUNT_ATTR_NOEXEC
	fsconfigCmdCreate   = 6      // FSCONFIG_CMD_CREATE
	resolveNoSymlinks   = 0x4    // RESOLVE_NO_SYMLINKS
	resolveNoMagiclinks = 0x2    // RESOLVE_NO_MAGICLINKS
)

// mountAttr is struct mount_attr (MOUNT_ATTR_SIZE_VER0, 32 bytes).
type mountAttr struct {
	set, clr, propagation, userns uint64
}

// openHow is struct open_how (24 bytes).
type openHow struct {
	flags, mode, resolve uint64
}

// GitPayload are the names inside a git directory a read-only bind keeps:
// what git reads as configuration or runs (profile.GitProtected's payload
// names, and info/attributes, whose filters name programs).
var GitPayload = []string{"config", "config.worktree", "commondir", "hooks", "info/attributes"}

// Namespace is what a T1 child sets up, decided by the parent.
type Namespace struct {
	// UserNS: enter a user namespace mapping UID and GID 1:1. Root enters
	// a mount namespace only: a user namespace mapping uid 0 alone would
	// show every other owner's files as the overflow id and take away
	// root's override on them (capabilities over an inode need its owner
	// mapped: user_namespaces(7)), changing what the run may read. Root
	// holds CAP_SYS_ADMIN for the mount namespace already; it cannot undo
	// the mounts afterwards because its capabilities are dropped, seccomp
	// refuses mount, umount2 and the new mount API, and Landlock refuses
	// every topology change of a restricted process.
	UserNS   bool
	UID, GID int
	// Dir is the working directory to enter again once the mounts are in
	// place (a cwd inside a writable tree would still be the covered,
	// read-only mount): absolute, "" for none.
	Dir string
	// Mounts are the plan's (and the spawn's) mounts.
	Mounts []linux.Mount
	// Net, if set, is the run's own network namespace (CLONE_NEWNET):
	// every network mode but on ([NewNetNS]).
	Net *NetNS
	// Hosts are the git directories found beneath the writable trees when
	// the cage was built ([FindGitDirs]); those still there are pinned.
	GitDirs []string
	// Keep are directories (the run's private temporary directory) that
	// stay visible at their paths when a MountTmpfs covers their parent:
	// each is bound onto a directory of the same name made in the new
	// tmpfs.
	Keep []string
	// Reopen are the descriptors the child opens again through its own
	// view once the mounts are made, each over the one the caller handed
	// (the /dev/null of a nil stdio, a root caller's terminal): there the
	// device is on the read-only mount, so a mode, owner or ACL change
	// through the descriptor fails with EROFS; the caller's is on the
	// host's.
	Reopen []Reopen
	// ProcReadOnly makes the run's fresh /proc read-only, at
	// forkexec.StepPID right after its mount (linux.Plan.RootMetadata).
	ProcReadOnly bool
}

// Reopen is one descriptor the T1 child replaces ([Namespace.Reopen]).
type Reopen struct {
	FD    int    // the child's descriptor to replace
	Path  string // the device's absolute path, opened without following a link
	Flags int    // its access mode: O_RDONLY, O_WRONLY or O_RDWR
	// Dev and Rdev are the handed device's, which fstat of the new
	// descriptor must show: the same device number on the same file
	// system (each devpts instance numbers its terminals from 0).
	Dev, Rdev uint64
}

// Flags are the namespaces the T1 child unshares at StepNamespace, in one
// call: the one place that names them (the pid namespace is forkexec's,
// at StepPID: it needs a fork).
func (ns *Namespace) Flags() uintptr {
	flags := uintptr(unix.CLONE_NEWNS)
	if ns.UserNS {
		flags |= unix.CLONE_NEWUSER
	}
	if ns.Net != nil {
		flags |= unix.CLONE_NEWNET
	}
	return flags
}

// maxGitWalk bounds the walk for git directories in one writable tree.
const maxGitWalk = 200000

// FindGitDirs walks the writable tree root (no link followed, no other
// file system entered) for .git directories and files, at most
// maxGitWalk entries, and reports whether the walk was cut short.
func FindGitDirs(root string) (dirs []string, truncated bool) {
	var rootDev uint64
	var st unix.Stat_t
	if unix.Lstat(root, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, false
	}
	rootDev = st.Dev
	n := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxGitWalk {
			truncated = true
			return filepath.SkipAll
		}
		if d.Name() == ".git" {
			dirs = append(dirs, p)
			if d.IsDir() {
				// Its worktrees/*/ git dirs, and its submodules' beneath
				// modules/ (gitsubmodules(7)).
				es, _ := os.ReadDir(filepath.Join(p, "worktrees"))
				for _, e := range es {
					if e.IsDir() {
						dirs = append(dirs, filepath.Join(p, "worktrees", e.Name()))
					}
				}
				dirs = moduleDirs(filepath.Join(p, "modules"), dirs, 0)
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() && p != root {
			var s unix.Stat_t
			if unix.Lstat(p, &s) == nil && s.Dev != rootDev {
				return filepath.SkipDir
			}
		}
		return nil
	})
	return dirs, truncated
}

// maxModuleDepth bounds the directory levels moduleDirs descends.
const maxModuleDepth = 32

// moduleDirs appends the submodule git directories beneath modules (a
// .git/modules or a submodule's own modules directory). A submodule's git
// directory is modules/<name>, and its name is its path by default, so a
// name can hold slashes ("third_party/sm" is modules/third_party/sm); a
// nested submodule's is beneath its parent's modules/ (gitsubmodules(7)).
// A directory with a HEAD is a git directory; any other is a part of a
// name, and is pinned too (it is an ancestor).
func moduleDirs(modules string, dirs []string, depth int) []string {
	if depth > maxModuleDepth {
		return dirs
	}
	es, _ := os.ReadDir(modules)
	for _, e := range es {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(modules, e.Name())
		dirs = append(dirs, p)
		if _, err := os.Lstat(filepath.Join(p, "HEAD")); err == nil {
			dirs = moduleDirs(filepath.Join(p, "modules"), dirs, depth+1)
		} else {
			dirs = moduleDirs(p, dirs, depth+1)
		}
	}
	return dirs
}

// nsBuilder prepares the calls; every word the child writes (fd slots,
// stat buffers) belongs to this spawn.
type nsBuilder struct {
	c     *Calls
	fds   *[32]uintptr // the current chunk of fd slots (a new one when full: no slot moves)
	nfd   int
	keep  []any
	empty *byte
}

func (b *nsBuilder) slot() *uintptr {
	if b.fds == nil || b.nfd == len(b.fds) {
		b.fds, b.nfd = new([32]uintptr), 0
		b.keep = append(b.keep, b.fds)
	}
	s := &b.fds[b.nfd]
	b.nfd++
	return s
}

func (b *nsBuilder) cstr(s string) uintptr {
	p, err := unix.BytePtrFromString(s)
	if err != nil {
		panic("linuxsandbox: BUG: NUL in " + strconv.Quote(s))
	}
	b.keep = append(b.keep, p)
	return uintptr(unsafe.Pointer(p))
}

func (b *nsBuilder) call(name string, c forkexec.Call) { b.c.add(name, c) }

func (b *nsBuilder) raw(trap uintptr, args ...uintptr) forkexec.Call {
	return forkexec.RawCall(forkexec.StepNamespace, trap, args...)
}

// writeFile writes s to the file at p: openat, write, close.
func (b *nsBuilder) writeFile(name, p, s string) {
	fd := b.slot()
	data := []byte(s)
	b.keep = append(b.keep, data)
	b.call("open "+p, b.raw(unix.SYS_OPENAT, atFDCWD, b.cstr(p), unix.O_WRONLY|unix.O_CLOEXEC).StoreResult(fd))
	b.call(name, b.raw(unix.SYS_WRITE, 0, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data))).ArgFrom(0, fd))
	b.call("close "+p, b.raw(unix.SYS_CLOSE, 0).ArgFrom(0, fd))
}

// open opens p in the child without following a link and checks its
// (dev, ino) against st, the parent's record; it returns the fd's slot.
func (b *nsBuilder) open(p string, st *unix.Stat_t) *uintptr {
	fd := b.slot()
	how := &openHow{flags: unix.O_PATH | unix.O_CLOEXEC, resolve: resolveNoSymlinks | resolveNoMagiclinks}
	buf := new(unix.Stat_t)
	b.keep = append(b.keep, how, buf)
	b.call("openat2 "+p, b.raw(unix.SYS_OPENAT2, atFDCWD, b.cstr(p), uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how)).StoreResult(fd))
	b.call("fstat "+p+" (must be the inode the parent saw)", b.raw(unix.SYS_FSTAT, 0, uintptr(unsafe.Pointer(buf))).ArgFrom(0, fd).
		WantEqual(&buf.Dev, st.Dev).WantEqual(&buf.Ino, st.Ino))
	return fd
}

func (b *nsBuilder) close(what string, fd *uintptr) {
	b.call("close "+what, b.raw(unix.SYS_CLOSE, 0).ArgFrom(0, fd))
}

func (b *nsBuilder) attr(set, clr uint64) uintptr {
	a := &mountAttr{set: set, clr: clr}
	b.keep = append(b.keep, a)
	return uintptr(unsafe.Pointer(a))
}

// bind clones the tree at target's fd (recursively if rec) onto itself,
// after mount_setattr set/clr on the clone's top mount.
func (b *nsBuilder) bind(what string, target *uintptr, rec bool, set, clr uint64) {
	tree := b.slot()
	flags := uintptr(openTreeClone | atEmptyPath | unix.O_CLOEXEC)
	if rec {
		flags |= atRecursive
	}
	e := uintptr(unsafe.Pointer(b.empty))
	b.call("open_tree "+what, b.raw(unix.SYS_OPEN_TREE, 0, e, flags).ArgFrom(0, target).StoreResult(tree))
	if set|clr != 0 {
		b.call("mount_setattr "+what, b.raw(unix.SYS_MOUNT_SETATTR, 0, e, atEmptyPath, b.attr(set, clr), 32).ArgFrom(0, tree))
	}
	b.call("move_mount "+what, b.raw(unix.SYS_MOVE_MOUNT, 0, e, 0, e, moveMountFEmptyPath|moveMountTEmptyPath).ArgFrom(0, tree).ArgFrom(2, target))
	b.close(what, tree)
}

// lstat records p's (dev, ino) if it exists and is not a link.
func lstat(p string) (*unix.Stat_t, bool) {
	st := new(unix.Stat_t)
	if unix.Lstat(p, st) != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil, false
	}
	return st, true
}

// ErrCannotProtect is wrapped by the refusal of a T1 spawn with a
// protected git name that is a symbolic link: a bind would cover the link,
// not what git reaches through it.
var ErrCannotProtect = errors.New("a protected git name is a symbolic link, which a read-only bind cannot cover")

// NamespaceCalls prepares the T1 child's calls at forkexec.StepNamespace
// for one spawn (the words the child writes are the spawn's own, so
// concurrent spawns never share them):
//
//   - unshare(CLONE_NEWUSER|CLONE_NEWNS), or CLONE_NEWNS alone for root
//     (see Namespace.UserNS), with CLONE_NEWNET for Namespace.Net (then lo
//     up and the listeners handed over: [NetNS]); with a user namespace the child writes its
//     own /proc/self/setgroups ("deny"), uid_map and gid_map (one line
//     mapping its id: user_namespaces(7)). A vfork child must: Go's
//     syscall package turns vfork off for CLONE_NEWUSER and writes the
//     maps from the parent (syscall/exec_linux.go).
//   - "/" made MS_REC|MS_PRIVATE, so no mount the host makes later
//     propagates in read-write (mount_namespaces(7));
//   - mount_setattr("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY): everything
//     read-only (Linux 5.12);
//   - each writable tree cloned with its submounts (open_tree
//     OPEN_TREE_CLONE|AT_RECURSIVE), its top mount made read-write again
//     (unless the host had it read-only) and moved onto itself: its
//     submounts stay read-only;
//   - each git directory still inside a writable tree, and each of its
//     ancestors below the tree, pinned by a read-write self-bind (a
//     mountpoint cannot be renamed: EBUSY), then its existing payload
//     ([GitPayload]) bound read-only; a .git file (a gitdir link) is bound
//     read-only itself;
//   - each trust-handoff path a protect mount names that exists inside a
//     writable tree bound read-only, its ancestors below the tree pinned;
//   - each protected store a mount names that exists: an empty read-only
//     tmpfs over a directory, /dev/null read-only over a file;
//   - chdir(Dir) again;
//   - each Reopen: openat2 of its path (O_NOCTTY, no link followed),
//     fstat (its device must be the handed one: ESTALE otherwise), dup3
//     over its descriptor;
//   - with ProcReadOnly, at StepPID, mount_setattr of /proc read-only.
func NamespaceCalls(ns *Namespace) (*Calls, error) {
	ns.Mounts = expandPrefixes(ns.Mounts)
	c := &Calls{names: map[forkexec.Step][]string{}}
	b := &nsBuilder{c: c, empty: &[]byte{0}[0]}
	b.call("unshare", b.raw(unix.SYS_UNSHARE, ns.Flags()))
	if ns.UserNS {
		b.writeFile("write /proc/self/setgroups", "/proc/self/setgroups", "deny")
		b.writeFile("write /proc/self/uid_map", "/proc/self/uid_map", fmt.Sprintf("%d %d 1\n", ns.UID, ns.UID))
		b.writeFile("write /proc/self/gid_map", "/proc/self/gid_map", fmt.Sprintf("%d %d 1\n", ns.GID, ns.GID))
	}
	if ns.Net != nil {
		ns.Net.calls(b)
	}
	b.call("mount propagation private", b.raw(unix.SYS_MOUNT, 0, b.cstr("/"), 0, unix.MS_REC|unix.MS_PRIVATE, 0))
	b.call("mount_setattr / read-only", b.raw(unix.SYS_MOUNT_SETATTR, atFDCWD, b.cstr("/"), atRecursive, b.attr(mountAttrRdonly, 0), 32))

	var writable []string
	for _, m := range ns.Mounts {
		if m.Kind == linux.MountWritable {
			writable = append(writable, m.Path)
		}
	}
	slices.Sort(writable) // a tree before the trees inside it
	writable = slices.Compact(writable)
	for _, p := range writable {
		st, ok := lstat(p)
		if !ok || (st.Mode&unix.S_IFMT != unix.S_IFDIR && st.Mode&unix.S_IFMT != unix.S_IFREG) {
			continue // nothing there to write (or a device: not a mount's business)
		}
		var sfs unix.Statfs_t
		hostRO := unix.Statfs(p, &sfs) == nil && sfs.Flags&unix.ST_RDONLY != 0
		fd := b.open(p, st)
		clr := uint64(mountAttrRdonly)
		if hostRO {
			clr = 0 // never more than the host allows
		}
		b.bind("writable "+p, fd, true, 0, clr)
		b.close(p, fd)
	}

	// Git directories inside the writable trees.
	pinned := map[string]bool{}
	for _, w := range writable {
		pinned[w] = true // the tree's own root is a mountpoint already
	}
	pin := func(p string) error {
		if pinned[p] {
			return nil
		}
		st, ok := lstat(p)
		if !ok {
			return nil
		}
		pinned[p] = true
		fd := b.open(p, st)
		b.bind("pin "+p, fd, true, 0, 0)
		b.close(p, fd)
		return nil
	}
	var gitDirs []string
	for _, g := range ns.GitDirs {
		if w := treeOf(g, writable); w != "" {
			gitDirs = append(gitDirs, g)
		}
	}
	slices.Sort(gitDirs)
	for _, g := range gitDirs {
		w := treeOf(g, writable)
		fi, err := os.Lstat(g)
		if err != nil {
			continue // gone since the cage was built
		}
		// The ancestors below the tree, outermost first, then g.
		var chain []string
		for d := path.Dir(g); d != w && within(d, w); d = path.Dir(d) {
			chain = append(chain, d)
		}
		slices.Reverse(chain)
		for _, d := range chain {
			pin(d)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return nil, fmt.Errorf("%s: %w", g, ErrCannotProtect)
		case !fi.IsDir():
			// A .git file names the git directory: read-only.
			st, _ := lstat(g)
			fd := b.open(g, st)
			b.bind("read-only "+g, fd, false, mountAttrRdonly, 0)
			b.close(g, fd)
			continue
		}
		pin(g)
		for _, name := range GitPayload {
			p := path.Join(g, name)
			if strings.Contains(name, "/") {
				pin(path.Dir(p))
			}
			fi, err := os.Lstat(p)
			if err != nil {
				continue
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return nil, fmt.Errorf("%s: %w", p, ErrCannotProtect)
			}
			st, _ := lstat(p)
			fd := b.open(p, st)
			b.bind("read-only "+p, fd, true, mountAttrRdonly, 0)
			b.close(p, fd)
		}
	}

	// Trust-handoff files and trees inside the writable trees (startup
	// files): each that exists read-only, its ancestors below the tree
	// pinned so it cannot be renamed away with them.
	for _, m := range ns.Mounts {
		if m.Kind != linux.MountProtect {
			continue
		}
		w := treeOf(m.Path, writable)
		st, ok := lstat(m.Path)
		if w == "" || !ok || throughLink(m.Path, m.Kind, ns.Mounts) {
			continue
		}
		var chain []string
		for d := path.Dir(m.Path); d != w && within(d, w); d = path.Dir(d) {
			chain = append(chain, d)
		}
		slices.Reverse(chain)
		for _, d := range chain {
			pin(d)
		}
		fd := b.open(m.Path, st)
		b.bind("read-only "+m.Path, fd, true, mountAttrRdonly, 0)
		b.close(m.Path, fd)
	}

	// Protected stores: an empty read-only mount over each that exists.
	var nullSt *unix.Stat_t
	for _, m := range ns.Mounts {
		if m.Kind != linux.MountHide {
			continue
		}
		st, ok := lstat(m.Path)
		if !ok || throughLink(m.Path, m.Kind, ns.Mounts) {
			continue
		}
		target := b.open(m.Path, st)
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			fsfd, mnt := b.slot(), b.slot()
			b.call("fsopen tmpfs for "+m.Path, b.raw(unix.SYS_FSOPEN, b.cstr("tmpfs"), unix.FSOPEN_CLOEXEC).StoreResult(fsfd))
			b.call("fsconfig create for "+m.Path, b.raw(unix.SYS_FSCONFIG, 0, fsconfigCmdCreate, 0, 0, 0).ArgFrom(0, fsfd))
			b.call("fsmount for "+m.Path, b.raw(unix.SYS_FSMOUNT, 0, unix.FSMOUNT_CLOEXEC,
				mountAttrRdonly|mountAttrNosuid|mountAttrNodev|mountAttrNoexec).ArgFrom(0, fsfd).StoreResult(mnt))
			e := uintptr(unsafe.Pointer(b.empty))
			b.call("move_mount empty over "+m.Path, b.raw(unix.SYS_MOVE_MOUNT, 0, e, 0, e, moveMountFEmptyPath|moveMountTEmptyPath).ArgFrom(0, mnt).ArgFrom(2, target))
			b.close("tmpfs mount", mnt)
			b.close("tmpfs context", fsfd)
		default:
			if nullSt == nil {
				var ok bool
				if nullSt, ok = lstat("/dev/null"); !ok {
					return nil, fmt.Errorf("linuxsandbox: /dev/null: %w", unix.ENOENT)
				}
			}
			null := b.open("/dev/null", nullSt)
			tree := b.slot()
			e := uintptr(unsafe.Pointer(b.empty))
			b.call("open_tree /dev/null for "+m.Path, b.raw(unix.SYS_OPEN_TREE, 0, e, openTreeClone|atEmptyPath|unix.O_CLOEXEC).ArgFrom(0, null).StoreResult(tree))
			b.call("mount_setattr /dev/null read-only", b.raw(unix.SYS_MOUNT_SETATTR, 0, e, atEmptyPath,
				b.attr(mountAttrRdonly|mountAttrNosuid|mountAttrNoexec, 0), 32).ArgFrom(0, tree))
			b.call("move_mount /dev/null over "+m.Path, b.raw(unix.SYS_MOVE_MOUNT, 0, e, 0, e, moveMountFEmptyPath|moveMountTEmptyPath).ArgFrom(0, tree).ArgFrom(2, target))
			b.close("/dev/null tree", tree)
			b.close("/dev/null", null)
		}
		b.close(m.Path, target)
	}
	// Private /tmp and /dev/shm: a fresh tmpfs on each, after the
	// read-only remount (so it stays writable). A kept directory's
	// parents are made by relative name from the tmpfs's root: a ".."
	// would climb out of it onto the host.
	for _, k := range ns.Keep {
		if !path.IsAbs(k) || path.Clean(k) != k {
			return nil, fmt.Errorf("linuxsandbox: BUG: kept directory %q is not a clean absolute path", k)
		}
	}
	for _, m := range ns.Mounts {
		if m.Kind != linux.MountTmpfs {
			continue
		}
		st, ok := lstat(m.Path)
		if !ok || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue // no directory to mount on
		}
		// What to keep, opened before the tmpfs covers it. A kept
		// directory deeper down (TMPDIR=/tmp/user/1000, as pam_tmpdir
		// sets it) gets its parents made in the new tmpfs, which is the
		// run's own: nothing is left in the host's /tmp.
		type kept struct {
			name string // the path below m.Path
			fd   *uintptr
		}
		var keep []kept
		var parents []string // below m.Path, each after its own parent
		for _, k := range ns.Keep {
			if !within(k, m.Path) {
				continue
			}
			if k == m.Path {
				return nil, fmt.Errorf("linuxsandbox: %s is the private tmpfs's own directory: it cannot be kept under it", k)
			}
			kst, ok := lstat(k)
			if !ok || kst.Mode&unix.S_IFMT != unix.S_IFDIR {
				return nil, fmt.Errorf("linuxsandbox: %s: %w", k, unix.ENOTDIR)
			}
			rel := strings.TrimPrefix(k, m.Path+"/")
			for i, c := range rel {
				if d := rel[:i]; c == '/' && !slices.Contains(parents, d) {
					parents = append(parents, d)
				}
			}
			keep = append(keep, kept{rel, b.open(k, kst)})
		}
		target := b.open(m.Path, st)
		fsfd, mnt := b.slot(), b.slot()
		attrs := uintptr(mountAttrNosuid | mountAttrNodev)
		if m.Path != "/tmp" {
			attrs |= mountAttrNoexec
		}
		b.call("fsopen tmpfs for "+m.Path, b.raw(unix.SYS_FSOPEN, b.cstr("tmpfs"), unix.FSOPEN_CLOEXEC).StoreResult(fsfd))
		b.call("fsconfig mode for "+m.Path, b.raw(unix.SYS_FSCONFIG, 0, unix.FSCONFIG_SET_STRING, b.cstr("mode"), b.cstr("1777"), 0).ArgFrom(0, fsfd))
		b.call("fsconfig create for "+m.Path, b.raw(unix.SYS_FSCONFIG, 0, fsconfigCmdCreate, 0, 0, 0).ArgFrom(0, fsfd))
		b.call("fsmount for "+m.Path, b.raw(unix.SYS_FSMOUNT, 0, unix.FSMOUNT_CLOEXEC, attrs).ArgFrom(0, fsfd).StoreResult(mnt))
		e := uintptr(unsafe.Pointer(b.empty))
		b.call("move_mount tmpfs onto "+m.Path, b.raw(unix.SYS_MOVE_MOUNT, 0, e, 0, e, moveMountFEmptyPath|moveMountTEmptyPath).ArgFrom(0, mnt).ArgFrom(2, target))
		for _, d := range parents {
			b.call("mkdir "+d+" in the private "+m.Path, b.raw(unix.SYS_MKDIRAT, 0, b.cstr(d), 0o700).ArgFrom(0, mnt))
		}
		for _, k := range keep {
			dir, tree := b.slot(), b.slot()
			name := b.cstr(k.name)
			b.call("mkdir "+k.name+" in the private "+m.Path, b.raw(unix.SYS_MKDIRAT, 0, name, 0o700).ArgFrom(0, mnt))
			b.call("open "+k.name+" in the private "+m.Path, b.raw(unix.SYS_OPENAT, 0, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC).ArgFrom(0, mnt).StoreResult(dir))
			b.call("open_tree "+k.name, b.raw(unix.SYS_OPEN_TREE, 0, e, openTreeClone|atRecursive|atEmptyPath|unix.O_CLOEXEC).ArgFrom(0, k.fd).StoreResult(tree))
			b.call("move_mount "+k.name+" into the private "+m.Path, b.raw(unix.SYS_MOVE_MOUNT, 0, e, 0, e, moveMountFEmptyPath|moveMountTEmptyPath).ArgFrom(0, tree).ArgFrom(2, dir))
			b.close(k.name+" tree", tree)
			b.close(k.name+" directory", dir)
			b.close(k.name, k.fd)
		}
		b.close("tmpfs mount", mnt)
		b.close("tmpfs context", fsfd)
		b.close(m.Path, target)
	}
	var dst unix.Stat_t
	if ns.Dir != "" && unix.Stat(ns.Dir, &dst) == nil {
		// By name (chdir follows links as StepDir's did), then checked: the
		// directory entered must be the one the parent saw.
		b.call("chdir "+ns.Dir+" again", b.raw(unix.SYS_CHDIR, b.cstr(ns.Dir)))
		fd, buf := b.slot(), new(unix.Stat_t)
		b.keep = append(b.keep, buf)
		b.call("open the working directory", b.raw(unix.SYS_OPENAT, atFDCWD, b.cstr("."), unix.O_PATH|unix.O_CLOEXEC).StoreResult(fd))
		b.call("fstat the working directory (must be the one the parent saw)", b.raw(unix.SYS_FSTAT, 0, uintptr(unsafe.Pointer(buf))).ArgFrom(0, fd).
			WantEqual(&buf.Dev, dst.Dev).WantEqual(&buf.Ino, dst.Ino))
		b.close("the working directory", fd)
	}
	for _, r := range ns.Reopen {
		if !path.IsAbs(r.Path) || r.FD < 0 || r.Flags&^unix.O_ACCMODE != 0 {
			return nil, fmt.Errorf("linuxsandbox: BUG: reopen %+v", r)
		}
		fd, buf := b.slot(), new(unix.Stat_t)
		how := &openHow{flags: uint64(r.Flags | unix.O_NOCTTY | unix.O_CLOEXEC), resolve: resolveNoSymlinks | resolveNoMagiclinks}
		b.keep = append(b.keep, buf, how)
		what := fmt.Sprintf("reopen fd %d: %s", r.FD, r.Path)
		b.call(what+": openat2", b.raw(unix.SYS_OPENAT2, atFDCWD, b.cstr(r.Path), uintptr(unsafe.Pointer(how)), unsafe.Sizeof(*how)).StoreResult(fd))
		b.call(what+": fstat (must be the device handed over)", b.raw(unix.SYS_FSTAT, 0, uintptr(unsafe.Pointer(buf))).ArgFrom(0, fd).
			WantEqual(&buf.Dev, r.Dev).WantEqual(&buf.Rdev, r.Rdev))
		b.call(what+": dup3", b.raw(unix.SYS_DUP3, 0, uintptr(r.FD), 0).ArgFrom(0, fd))
		b.close(r.Path, fd)
	}
	if ns.ProcReadOnly {
		b.call("mount_setattr /proc read-only", forkexec.RawCall(forkexec.StepPID, unix.SYS_MOUNT_SETATTR, atFDCWD, b.cstr("/proc"), 0, b.attr(mountAttrRdonly, 0), 32))
	}
	c.keep = append(c.keep, b.keep)
	return c, nil
}

// expandPrefixes replaces each prefix mount by one mount per name that
// exists now in its directory and begins with its last element (in any
// letter case, as the hard-deny table matches names).
func expandPrefixes(ms []linux.Mount) []linux.Mount {
	var out []linux.Mount
	for _, m := range ms {
		if !m.Prefix {
			out = append(out, m)
			continue
		}
		dir, base := path.Split(m.Path)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue // no directory, no name to cover
		}
		for _, e := range ents {
			if n := e.Name(); len(n) >= len(base) && strings.EqualFold(n[:len(base)], base) {
				out = append(out, linux.Mount{Kind: m.Kind, Path: path.Join(dir, n), Why: m.Why})
			}
		}
	}
	return out
}

// throughLink reports whether the existing p is reached through a
// symbolic link in one of its parents while the spelling the link leads
// to has a mount of the same kind too (profile.Protected.Places lists
// both): that one covers what p names, and p itself cannot be opened
// without following the link. Otherwise p is kept and the child's
// openat2 fails the spawn (ELOOP): never a store left uncovered.
func throughLink(p string, kind linux.MountKind, ms []linux.Mount) bool {
	r, err := filepath.EvalSymlinks(p)
	if err != nil || r == p {
		return false
	}
	return slices.ContainsFunc(ms, func(m linux.Mount) bool { return m.Kind == kind && m.Path == r })
}

// MountRuleCalls prepares the Landlock rules for the mounts the child made
// itself (linux.Plan.MountRules: the fresh /proc, the private /tmp and
// /dev/shm), at forkexec.StepPID, after the /proc mount and before
// landlock_restrict_self: each path is opened (O_PATH) in the child and
// added to rs through its descriptor. rs must be this spawn's own: a rule
// added through an inherited descriptor changes the ruleset object the
// parent holds, for every later spawn built from it.
func MountRuleCalls(rs *Ruleset, rules []linux.PathRule, handled linux.FSAccess) *Calls {
	c := &Calls{names: map[forkexec.Step][]string{}}
	b := &nsBuilder{c: c}
	for _, r := range rules {
		a := r.Access & handled
		if a == 0 {
			continue
		}
		// A 16-byte buffer: the fd slot is a whole word at offset 8, the
		// packed struct's parent_fd its low half (little-endian; the high
		// half is 0 for a descriptor).
		buf := new([2]uint64)
		buf[0] = uint64(a)
		b.keep = append(b.keep, buf)
		slot := (*uintptr)(unsafe.Pointer(&buf[1]))
		b.call("open "+r.Path+" (the run's own mount)", forkexec.RawCall(forkexec.StepPID, unix.SYS_OPENAT, atFDCWD, b.cstr(r.Path), unix.O_PATH|unix.O_CLOEXEC).StoreResult(slot))
		b.call("landlock_add_rule "+r.Path, forkexec.RawCall(forkexec.StepPID, unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), landlockRulePathBeneath, uintptr(unsafe.Pointer(buf)), 0))
		b.call("close "+r.Path, forkexec.RawCall(forkexec.StepPID, unix.SYS_CLOSE, 0).ArgFrom(0, slot))
	}
	c.keep = append(c.keep, b.keep, rs)
	return c
}

// treeOf returns the innermost writable tree holding p, or "".
func treeOf(p string, trees []string) string {
	best := ""
	for _, t := range trees {
		if p != t && within(p, t) && len(t) > len(best) {
			best = t
		}
	}
	return best
}

// Join returns calls a followed by b (names kept per step).
func Join(a, b *Calls) *Calls {
	c := &Calls{names: make(map[forkexec.Step][]string, len(a.names)+len(b.names)), keep: []any{a.keep, b.keep},
		Calls: make([]forkexec.Call, 0, len(a.Calls)+len(b.Calls))}
	for _, x := range []*Calls{a, b} {
		pos := map[forkexec.Step]int{} // x's calls of each step seen so far
		for _, call := range x.Calls {
			st := call.Step()
			c.add(x.names[st][pos[st]], call)
			pos[st]++
		}
	}
	return c
}
