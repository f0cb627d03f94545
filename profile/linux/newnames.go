package linux

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/net/bpf"
)

// NewNameCall is a system call that creates a name in a directory, which
// the new-names supervisor performs in the target's stead (see
// docs/design-new-names.md).
type NewNameCall struct {
	Syscall string
	// FlagsArg is the argument holding open flags: the call creates a
	// name only with O_CREAT there. -1: every call creates one.
	FlagsArg int
}

// NewNameCalls is the one list of the calls the new-names filter sends to
// the supervisor (x86_64 names). openat2 is not among them: the cage's
// filter answers it ENOSYS. bind is, whatever the family (the address is
// behind a pointer): a Unix socket bound to a path is a name too, and one
// named objects or refs passes git's access(X_OK) test of a repository.
var NewNameCalls = []NewNameCall{
	{"open", 1}, {"openat", 2}, {"creat", -1},
	{"mkdir", -1}, {"mkdirat", -1}, {"mknod", -1}, {"mknodat", -1},
	{"rename", -1}, {"renameat", -1}, {"renameat2", -1},
	{"link", -1}, {"linkat", -1}, {"symlink", -1}, {"symlinkat", -1},
	{"bind", -1},
}

// NewNameClass says where the supervisor refuses a name.
type NewNameClass int

const (
	// NewNameAnywhere: refused in any directory.
	NewNameAnywhere NewNameClass = iota + 1
	// NewNameInGitDir: refused in a git directory, one holding any of
	// the NewNameMarker names (a run that removed HEAD leaves the others).
	NewNameInGitDir
	// NewNameInGitInfo: refused in a directory whose parent is a git
	// directory (its info/).
	NewNameInGitInfo
	// NewNameMarker: one of the three names git takes a directory for a
	// repository by (setup.c, is_git_directory: HEAD, objects, refs),
	// refused where it would complete the three.
	NewNameMarker
)

// NewNameRule is one name of the supervisor's deny list, compared as a
// case-folding directory would: ASCII case, and NewNameFolds.
type NewNameRule struct {
	Name  string
	Class NewNameClass
}

// NewNameRules is the one deny list: the supervisor refuses each (EPERM)
// where its class says, but in the run's private temporary mounts; the
// plan's text and Decide read it too. info is there because a whole info/
// renamed or linked into a git directory would bring its attributes.
var NewNameRules = []NewNameRule{
	{".git", NewNameAnywhere}, {"commondir", NewNameAnywhere},
	{"hooks", NewNameInGitDir}, {"config", NewNameInGitDir}, {"config.worktree", NewNameInGitDir}, {"info", NewNameInGitDir},
	{"attributes", NewNameInGitInfo},
	{"HEAD", NewNameMarker}, {"objects", NewNameMarker}, {"refs", NewNameMarker},
}

// NewNameFolds are the characters whose full case folding is ASCII
// letters (Unicode's CaseFolding.txt, statuses C and F, which Linux's
// casefolding file systems use: fs/unicode/mkutf8data.c): on an ext4 or
// f2fs casefold directory, or vfat, "con\ufb01g" is config.
var NewNameFolds = [][2]string{
	{"\u212a", "k"}, {"\u017f", "s"}, {"\u00df", "ss"}, {"\u1e9e", "ss"},
	{"\ufb00", "ff"}, {"\ufb01", "fi"}, {"\ufb02", "fl"}, {"\ufb03", "ffi"}, {"\ufb04", "ffl"}, {"\ufb05", "st"}, {"\ufb06", "st"},
	{"\u0131", "i"}, // exFAT's up-case table, not a Unicode folding
}

// NewNameIgnorable are the Default_Ignorable_Code_Point ranges (Unicode's
// DerivedCoreProperties.txt): Linux's casefolding file systems dropped
// them from names before 6.12 ("unicode: Don't special case ignorable
// code points"), so there ".g\u200bit" was .git; the supervisor skips them
// when it compares. It also takes the trailing dots and spaces vfat
// strips (vfat_striptail_len) and U+0131 (exFAT's up-case table makes it
// I) as nothing and i.
var NewNameIgnorable = [][2]rune{
	{0x00ad, 0x00ad}, {0x034f, 0x034f}, {0x061c, 0x061c}, {0x115f, 0x1160}, {0x17b4, 0x17b5},
	{0x180b, 0x180f}, {0x200b, 0x200f}, {0x202a, 0x202e}, {0x2060, 0x206f}, {0x3164, 0x3164},
	{0xfe00, 0xfe0f}, {0xfeff, 0xfeff}, {0xffa0, 0xffa0}, {0xfff0, 0xfff8}, {0x1bca0, 0x1bca3},
	{0x1d173, 0x1d17a}, {0xe0000, 0xe0fff},
}

// newNameFolder replaces NewNameFolds' sequences by their letters.
var newNameFolder = sync.OnceValue(func() *strings.Replacer {
	var pairs []string
	for _, f := range NewNameFolds {
		pairs = append(pairs, f[0], f[1])
	}
	return strings.NewReplacer(pairs...)
})

// newNameRule returns the rule for name, or false.
func newNameRule(name string) (NewNameRule, bool) {
	name = strings.Map(func(r rune) rune {
		for _, g := range NewNameIgnorable {
			if g[0] <= r && r <= g[1] {
				return -1
			}
		}
		return r
	}, name)
	name = strings.TrimRight(name, ". ")
	folded := newNameFolder().Replace(name)
	for _, r := range NewNameRules {
		if asciiFoldEqual(folded, r.Name) {
			return r, true
		}
	}
	return NewNameRule{}, false
}

// asciiFoldEqual compares a and b ignoring ASCII case only (the
// supervisor's folding; strings.EqualFold folds more).
func asciiFoldEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// newNamesText says what the supervisor refuses, from NewNameRules.
func newNamesText() string {
	var any, gitDir, info, markers []string
	for _, r := range NewNameRules {
		switch r.Class {
		case NewNameAnywhere:
			any = append(any, r.Name)
		case NewNameInGitDir:
			gitDir = append(gitDir, r.Name)
		case NewNameInGitInfo:
			info = append(info, r.Name)
		case NewNameMarker:
			markers = append(markers, r.Name)
		}
	}
	return fmt.Sprintf("%s anywhere; %s in a git directory (one holding %s); %s in a directory inside one; and the %s that would complete a repository",
		strings.Join(any, ", "), strings.Join(gitDir, ", "), strings.Join(markers, ", "), strings.Join(info, ", "), strings.Join(markers, ", "))
}

const (
	retUserNotif = 0x7fc00000 // SECCOMP_RET_USER_NOTIF
	oCreat       = 0o100      // O_CREAT on x86_64
)

// ErrNewNamesArch reports an architecture the supervisor does not serve.
var ErrNewNamesArch = errors.New("linux: the new-names supervisor serves x86_64 only")

// NewNamesFilter assembles the target's second seccomp program: each call
// of NewNameCalls (open and openat only with O_CREAT) becomes a user
// notification, landlock_create_ruleset answers ENOSYS (a Landlock layer
// of the target's own would not bind the supervisor, which acts in the
// outer domain), and everything else is allowed (the cage's own filter,
// installed beside it, decides the rest: seccomp takes the most
// restrictive answer of all filters, kernel/seccomp.c).
func NewNamesFilter(arch *Arch) ([]bpf.RawInstruction, error) {
	if arch != ArchAMD64 {
		return nil, ErrNewNamesArch
	}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: arch.AuditArch, SkipTrue: 1},
		bpf.RetConstant{Val: retKillProcess},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: x32SyscallBit, SkipFalse: 1},
		bpf.RetConstant{Val: retKillProcess},
	}
	nr, ok := arch.syscalls["landlock_create_ruleset"]
	if !ok {
		return nil, errors.New("linux: no landlock_create_ruleset number")
	}
	prog = append(prog,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: 1},
		bpf.RetConstant{Val: retErrno | uint32(ENOSYS)},
	)
	for _, c := range NewNameCalls {
		nr, ok := arch.syscalls[c.Syscall]
		if !ok {
			return nil, errors.New("linux: no number for " + c.Syscall)
		}
		if c.FlagsArg < 0 {
			prog = append(prog,
				bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: 1},
				bpf.RetConstant{Val: retUserNotif},
			)
			continue
		}
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: 4},
			bpf.LoadAbsolute{Off: uint32(offArgs + 8*c.FlagsArg), Size: 4},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: oCreat, SkipFalse: 1},
			bpf.RetConstant{Val: retUserNotif},
			bpf.RetConstant{Val: retAllow},
		)
	}
	prog = append(prog, bpf.RetConstant{Val: retAllow})
	return bpf.Assemble(prog)
}

// newNameList names NewNameCalls for the plan's text.
func newNameList() string {
	var ns []string
	for _, c := range NewNameCalls {
		if c.FlagsArg >= 0 {
			ns = append(ns, c.Syscall+"(O_CREAT)")
		} else {
			ns = append(ns, c.Syscall)
		}
	}
	return strings.Join(ns, ", ")
}

// SupervisesNewNames reports whether a spawn with rules runs the
// new-names supervisor: the plan has it (NewNames) and a rule of the
// policy's or a grant's lets a tree be written. The private temporary
// directory alone does not count: nothing outside the run trusts it.
func (pl *Plan) SupervisesNewNames(rules []PathRule) bool {
	return pl.NewNames && slices.ContainsFunc(rules, func(r PathRule) bool {
		return r.Layer != LayerBase && r.Layer != LayerTemp && r.Access&fsWrite != 0 && r.Access&^FSFileRights != 0
	})
}
