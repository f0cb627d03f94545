package tests

import (
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// anonScript tries, on descriptors the run makes itself whose inode is the
// kernel's one anonymous inode (an eventfd, an epoll instance and, before
// pidfs in Linux 6.9, a pidfd: fs/anon_inodes.c), a mode and an owner
// change to the values they have, by descriptor and through
// /proc/self/fd. Before Linux 6.15 ("anon_inode: explicitly block
// ->setattr()", 2025) the kernel applies them to that one inode, which
// every such descriptor on the host shares; setting the values it has
// keeps the probe harmless while showing whether the call went through.
const anonScript = `import os, select, stat
fds = {"eventfd": os.eventfd(0), "epoll": select.epoll().fileno(), "pidfd": os.pidfd_open(os.getpid())}
for n, fd in fds.items():
    st = os.fstat(fd)
    p = "/proc/self/fd/%d" % fd
    for op, f in (("fchmod", lambda: os.fchmod(fd, stat.S_IMODE(st.st_mode))),
                  ("chmod", lambda: os.chmod(p, stat.S_IMODE(st.st_mode))),
                  ("fchown", lambda: os.fchown(fd, st.st_uid, st.st_gid))):
        try:
            f()
            print("%s-%s: ok" % (n, op))
        except OSError as e:
            print("%s-%s: FAIL %s" % (n, op, e.strerror))
`

// TestRTRootMetaAnonInode: root's lifted chmod/chown at T1 reaches no
// inode beyond the run through the descriptors it makes itself: on a
// kernel that lets an anonymous inode's mode and owner change (Debian
// 12's 6.1 does), a T1 cage keeps root's refusal, since one fchmod of an
// eventfd would change the mode every eventfd, epoll, timerfd, signalfd
// and inotify descriptor on the host shows. Run as nobody too (the
// anonymous inode is root's, so the kernel refuses nobody: EPERM).
func TestRTRootMetaAnonInode(t *testing.T) {
	requireT1(t)
	dir := tempHome(t)
	c := newCage(t, policy(t, profile.Fork(), profile.Read(dir), profile.Read("/proc")), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	var out strings.Builder
	if err := runStdio(t, c, python+" -c '"+anonScript+"'", nil, &out, nil); err != nil {
		t.Fatalf("script: %v (stdout %q)", err, out.String())
	}
	got := parseResults(out.String())
	for _, n := range []string{"eventfd", "epoll", "pidfd"} {
		for _, op := range []string{"fchmod", "chmod", "fchown"} {
			k := n + "-" + op
			v, ok := got[k]
			switch {
			case !ok:
				t.Errorf("%s: no result (output %q)", k, out.String())
			case !strings.HasPrefix(v, "FAIL"):
				t.Errorf("%s: %s: the run changed the metadata of an inode outside it", k, v)
			default:
				t.Logf("%s: %s", k, v)
			}
		}
	}
}
