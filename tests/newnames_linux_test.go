package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/internal/testenv"
	"github.com/procage-go/procage/profile"
)

// The new-names supervisor's canaries (docs/design-new-names.md): at T1 a
// run's calls that create a name are performed by the supervisor, which
// refuses new git names. Each canary runs once with the trust-handoff
// class waived (no supervisor: the hole open, as the kernel alone leaves
// it) and once without (closed), in a real T1 cage, as root and as nobody.

// requireNewNames fails unless T1 runs supervise new names here.
func requireNewNames(t *testing.T) {
	t.Helper()
	requireT1(t)
	if r := cage.Probe(); r.NewNames != nil {
		t.Fatalf("no new-names supervisor here: %v", r.NewNames)
	}
}

// trustOpts is what a T1 workload test needs for a writable tree: nothing
// where the supervisor runs, the trust-handoff waiver where it does not.
func trustOpts() []profile.Option {
	if cage.Probe().NewNames == nil {
		return nil
	}
	return []profile.Option{profile.Waive(profile.TrustHandoff)}
}

// gitFixture makes a tree holding sub/.git and sub2/.git with HEAD,
// objects and refs but no hooks, no info and no commondir: the names a run
// could create.
func gitFixture(t *testing.T) string {
	t.Helper()
	w := tempHome(t)
	for _, d := range []string{"sub/.git/objects", "sub/.git/refs/heads", "sub2/.git/objects", "sub2/.git/refs/heads"} {
		if err := os.MkdirAll(filepath.Join(w, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, s := range map[string]string{"sub/.git/HEAD": "ref: refs/heads/main\n", "sub/.git/config": "[core]\n\trepositoryformatversion = 0\n",
		"sub2/.git/HEAD": "ref: refs/heads/main\n"} {
		if err := os.WriteFile(filepath.Join(w, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// newNamesScript tries each new name a run could plant for the user's
// git, and the ordinary creations a build makes.
const newNamesScript = `export HOME=$PWD
try commondir 'echo ../../evil > sub/.git/commondir'
try hooks-dir 'mkdir sub/.git/hooks'
try hooks-link 'ln -s /tmp sub/.git/hooks'
try config-worktree 'echo "[core] fsmonitor = evil" > sub/.git/config.worktree'
try info-attributes 'mkdir -p sub/.git/info && echo "* filter=evil" > sub/.git/info/attributes'
try nested-git 'mkdir -p n && mkdir n/.git'
try git-init 'git init -q gi'
try gitfile 'mkdir -p o && echo "gitdir: /tmp/evil" > o/.git'
try git-case 'mkdir -p c && mkdir c/.GIT'
try bare 'mkdir -p b/objects b/refs && echo "ref: refs/heads/main" > b/HEAD'
try bare-rename 'mkdir -p r/objects r/refs && echo "ref: refs/heads/main" > r.head && mv r.head r/HEAD'
try dangling 'mkdir -p d && ln -s .git d/l && echo x > d/l'
try hardlink 'echo x > hl && ln hl sub/.git/commondir'
try rename-config 'echo x > rc && mv rc sub/.git/config.worktree'
try build 'mkdir -p src/x && echo a > src/x/a && mv src/x/a src/x/b && ln -s b src/x/c && ln src/x/b src/x/d && cat src/x/c src/x/d >/dev/null'
try umask 'umask 077 && touch um && test "$(stat -c %a um)" = 600'
try stdout 'echo hi > /dev/stdout'
try fd-spelling 'echo hi > /dev/fd/1'
try create-through-link 'echo x > tgt && ln -s tgt lk && echo y >> lk && test "$(cat tgt)" = "x
y"'
try dangling-ok 'ln -s made-through dl && echo z > dl && test -f made-through'
try fifo 'mkfifo ff && (cat ff > /dev/null &) && sleep 0.3 && echo x > ff'
try magic-link 'ln -s /proc/self/fd/0 m0 && echo x >> m0'
try proc-open '/usr/bin/python3 -c "import os; os.open(\"/proc/self/status\", os.O_RDONLY|os.O_CREAT)"'
try self-mem 'ln -s /proc/self/mem sm && /usr/bin/python3 -c "import os; os.open(\"sm\", os.O_RDONLY|os.O_CREAT)"'
try info-rename 'mkdir -p sub/.git/stage/info && echo "* diff=evil" > sub/.git/stage/info/attributes && mv sub/.git/stage/info sub/.git/info'
try info-link 'mkdir -p ev && echo "* diff=evil" > ev/attributes && ln -s ../../ev sub/.git/info'
try fifo-link 'mkfifo ff2 && ln -s ff2 fl && { (exec 3>fl) >/dev/null 2>&1 & } ; sleep 0.5; timeout 5 mkdir after-fifo'
try trail 'echo x > tsf && mv tsf tsd/'
try ligature 'mkdir "sub/.git/con$(printf "\\357\\254\\201")g.worktree"'
try ignorable 'mkdir -p ig && mkdir "ig/.g$(printf "\\342\\200\\213")it"'
try soft-hyphen 'mkdir "sub/.git/hoo$(printf "\\302\\255")ks"'
try trailing-dot 'mkdir -p td && mkdir "td/.git."'
try fd-dir 'exec 3<src && mkdir /dev/fd/3/viafd && test -d src/viafd'
try fd-dir-git 'exec 3<sub && mkdir /dev/fd/3/.git/hooks'
try creat-dir '/usr/bin/python3 -c "import os; os.open(\"src\", os.O_RDONLY|os.O_CREAT)"'
try emfile '/usr/bin/python3 -c "
import os, resource
resource.setrlimit(resource.RLIMIT_NOFILE, (3, 3))
try:
    os.open(\"emfile-new\", os.O_WRONLY|os.O_CREAT, 0o644)
except OSError as e:
    print(e.errno)
" | grep -qx 24 && test ! -e emfile-new'
try head-removed 'mv sub2/.git/HEAD sub2/.git/HEAD.bak && mkdir sub2/.git/hooks'
`

// TestT1NewNamesCanaries: with the class waived (no supervisor) every
// git name is created; under the supervisor each is refused with EPERM
// and none reaches the host, while ordinary creations, umask, /dev/stdout,
// links and FIFOs work as the kernel alone would have them.
func TestT1NewNamesCanaries(t *testing.T) {
	requireNewNames(t)
	if _, err := exec.LookPath("git"); err != nil {
		testenv.Skip(t, testenv.ReasonNoProgram, "git is not on PATH: "+err.Error())
	}
	names := []string{"commondir", "hooks-dir", "hooks-link", "config-worktree", "info-attributes", "nested-git", "git-init", "gitfile", "git-case", "bare", "bare-rename", "dangling", "hardlink", "rename-config",
		"info-rename", "info-link", "head-removed", "ligature", "fd-dir-git", "ignorable", "soft-hyphen", "trailing-dot"}
	planted := []string{"sub/.git/commondir", "sub/.git/hooks", "sub/.git/config.worktree", "sub/.git/info", "n/.git", "gi/.git", "o/.git", "c/.GIT", "b/HEAD", "r/HEAD", "d/.git", "sub2/.git/hooks"}

	// Open: the class waived, the kernel alone.
	w := gitFixture(t)
	c := newCage(t, policy(t, profile.Fork(), profile.ReadWrite(w), profile.Waive(profile.TrustHandoff)),
		cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	if c.LinuxPlan().NewNames {
		t.Fatal("the waived plan supervises new names")
	}
	got := t1Results(t, c, w, newNamesScript)
	for _, k := range []string{"commondir", "hooks-dir", "config-worktree", "info-attributes", "nested-git", "gitfile", "git-case", "bare", "bare-rename", "dangling", "info-rename", "head-removed"} {
		want(t, got, k, "ok")
	}

	// Closed: the supervisor, no gap accepted.
	w = gitFixture(t)
	c = newCage(t, policy(t, profile.Fork(), profile.ReadWrite(w)), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	if !c.LinuxPlan().NewNames || !strings.Contains(c.Plan(), "\nnew names: ") {
		t.Fatalf("the plan does not supervise new names:\n%s", c.Plan())
	}
	got = t1Results(t, c, w, newNamesScript)
	for _, k := range names {
		if k == "hooks-dir" || k == "hooks-link" || k == "head-removed" {
			want(t, got, k, "Operation not permitted")
			continue
		}
		want(t, got, k, "not permitted")
	}
	for _, k := range []string{"build", "umask", "stdout", "fd-spelling", "create-through-link", "dangling-ok", "fifo", "fifo-link", "fd-dir", "emfile"} {
		want(t, got, k, "ok")
	}
	want(t, got, "creat-dir", "Is a directory")
	want(t, got, "trail", "Not a directory")
	// A planted magic link would lead to the supervisor's own descriptors.
	want(t, got, "magic-link", "Too many levels of symbolic links")
	// The supervisor's layer reads /proc; the target's (this policy) not;
	// and /proc/self behind a link names the supervisor, whose own memory
	// it could always open.
	want(t, got, "proc-open", "Permission denied")
	want(t, got, "self-mem", "Permission denied")
	// With /proc granted, the supervisor's own memory behind a link.
	c = newCage(t, policy(t, profile.Fork(), profile.ReadWrite(w), profile.Read("/proc")), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	got = t1Results(t, c, w, `try self-mem-proc 'ln -s /proc/self/mem sm2 && /usr/bin/python3 -c "import os; f = os.open(\"sm2\", os.O_RDONLY|os.O_CREAT); print(os.readlink(\"/proc/self/fd/%d\" % f))"'`)
	want(t, got, "self-mem-proc", "Permission denied")
	for _, p := range planted {
		if _, err := os.Lstat(filepath.Join(w, p)); err == nil {
			t.Errorf("%s exists on the host", p)
		}
	}
}

// raceC flips a name between an allowed one and .git while the main
// thread creates it: a supervisor that checked the name and then let the
// kernel read it again would create .git (the design's measurement: within
// 1 to 42 tries).
const raceC = `#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static char name[8] = "okay";
static volatile int stop;
static void *flip(void *arg) {
	while (!stop) {
		memcpy(name, ".git", 5);
		__asm__ volatile("" ::: "memory"); /* keep both stores */
		memcpy(name, "okay", 5);
		__asm__ volatile("" ::: "memory");
	}
	return arg;
}
int main(int argc, char **argv) {
	int n = atoi(argv[1]), made = 0, refused = 0;
	pthread_t t;
	struct stat st;
	pthread_create(&t, 0, flip, 0);
	for (int i = 0; i < n; i++) {
		if (mkdir(name, 0755) == 0) { made++; rmdir("okay"); }
		else if (errno == EPERM) refused++;
	}
	stop = 1;
	pthread_join(t, 0);
	printf("made %d refused %d git %d\n", made, refused, stat(".git", &st) == 0);
	return 0;
}
`

// signalC creates files with O_EXCL while another thread signals it
// without pause: a call the supervisor performed must not be restarted
// after a signal (EEXIST), which SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
// keeps from happening.
const signalC = `#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static pthread_t main_t;
static volatile int stop;
static void h(int s) { (void)s; }
static void *pester(void *arg) {
	while (!stop) { pthread_kill(main_t, SIGUSR1); usleep(20); }
	return arg;
}
int main(int argc, char **argv) {
	int n = atoi(argv[1]), bad = 0;
	char f[32];
	pthread_t t;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = h;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, 0);
	main_t = pthread_self();
	pthread_create(&t, 0, pester, 0);
	for (int i = 0; i < n; i++) {
		snprintf(f, sizeof f, "f%d", i);
		int fd = open(f, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0) { bad++; fprintf(stderr, "%s: %s\n", f, strerror(errno)); } else close(fd);
	}
	stop = 1;
	pthread_join(t, 0);
	printf("bad %d\n", bad);
	return 0;
}
`

// TestT1NewNamesRaces: the name is read once and the supervisor acts on
// what it read (no .git in thousands of flips, which it did refuse); and
// creations interrupted by signals are neither lost nor repeated.
func TestT1NewNamesRaces(t *testing.T) {
	requireNewNames(t)
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testenv.Skip(t, testenv.ReasonNoProgram, "gcc is not on PATH: "+err.Error())
	}
	bin := tempHome(t)
	for name, src := range map[string]string{"race": raceC, "signal": signalC} {
		if err := os.WriteFile(filepath.Join(bin, name+".c"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(gcc, "-O1", "-pthread", "-o", filepath.Join(bin, name), filepath.Join(bin, name+".c")).CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v %s", name, err, out)
		}
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	w := tempHome(t)
	c := newCage(t, policy(t, profile.ReadWrite(w), profile.Exec(bin)), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	out, errs, err := runIn(t, c, w, filepath.Join(bin, "race"), "3000")
	if err != nil {
		t.Fatalf("race: %v %s %s", err, out, errs)
	}
	var made, refused, git int
	if _, err := fmt.Sscanf(out, "made %d refused %d git %d", &made, &refused, &git); err != nil || git != 0 || made == 0 || refused == 0 {
		t.Errorf("race: %q (%v); want .git never made, and both names tried (made > 0, refused > 0)", out, err)
	}
	if _, err := os.Lstat(filepath.Join(w, ".git")); err == nil {
		t.Error(".git exists on the host")
	}
	out, errs, err = runIn(t, c, w, filepath.Join(bin, "signal"), "3000")
	if err != nil || strings.TrimSpace(out) != "bad 0" {
		t.Errorf("signal: %v, stdout %q, stderr %q; want every O_EXCL create to succeed once", err, out, errs)
	}
	// The race's torn reads of its flipping name leave other names behind:
	// count the signal program's.
	files, _ := filepath.Glob(filepath.Join(w, "f[0-9]*"))
	if len(files) != 3000 {
		t.Errorf("signal: %d files on the host, want 3000", len(files))
	}
}

// TestT1NewNamesSupervisorKilled: the run may kill every process it can
// signal (the supervisor too, below Landlock ABI 6's signal scoping); a
// new name is then refused all the same (ENOSYS once the supervisor is
// gone: the filter fails closed), and .git never appears.
func TestT1NewNamesSupervisorKilled(t *testing.T) {
	requireNewNames(t)
	w := gitFixture(t)
	c := newCage(t, policy(t, profile.Fork(), profile.ReadWrite(w)), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	out, errs, err := runIn(t, c, w, "/bin/sh", "-c", "kill -9 -1; sleep 0.2; mkdir .git && echo MADE; mkdir sub/.git/hooks && echo MADE; echo done")
	if err != nil || !strings.Contains(out, "done") || strings.Contains(out, "MADE") {
		t.Errorf("%v, stdout %q, stderr %q; want both mkdirs refused", err, out, errs)
	}
	for _, p := range []string{".git", "sub/.git/hooks"} {
		if _, err := os.Lstat(filepath.Join(w, p)); err == nil {
			t.Errorf("%s exists on the host", p)
		}
	}
}

// TestT1NewNamesPrivateTemp: the run's private /tmp, /dev/shm and TMPDIR
// are nothing the user trusts, so a repository may be made there (tests
// that git init a temporary directory work), while the writable tree
// still refuses one.
func TestT1NewNamesPrivateTemp(t *testing.T) {
	requireNewNames(t)
	// Outside /tmp: no private /tmp is mounted over a tree beneath it.
	// (.ci/kernel-matrix's guest has a read-only /var/tmp: /dev/shm then,
	// which is no private /dev/shm.)
	var w string
	var err error
	for _, base := range []string{"/var/tmp", "/dev/shm"} {
		if w, err = os.MkdirTemp(base, "procage-newnames-"); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(w) })
	c := newCage(t, policy(t, profile.Fork(), profile.ReadWrite(w)), cage.WithLinuxTier(cage.TierT1), cage.WithPrivateTemp(), cage.WithHome(tempHome(t)))
	// Run from w: a working directory under /tmp (a checkout there) keeps
	// the host's /tmp.
	got := t1ResultsIn(t, c, w, w, `
try tmp 'mkdir /tmp/r && mkdir /tmp/r/.git'
try tmpdir 'mkdir "$TMPDIR/r" && mkdir "$TMPDIR/r/.git"'
try shm 'mkdir /dev/shm/r && mkdir /dev/shm/r/.git'
try tree 'mkdir r && mkdir r/.git'
`)
	for _, k := range []string{"tmp", "tmpdir", "shm"} {
		if k == "shm" && strings.HasPrefix(w, "/dev/shm/") {
			continue // the tree's own mount: refused, as tree below
		}
		want(t, got, k, "ok")
	}
	want(t, got, "tree", "Operation not permitted")
	if _, err := os.Lstat(filepath.Join(w, "r/.git")); err == nil {
		t.Error("r/.git exists on the host")
	}
}

// bindRaceC binds "refs" relative to its working directory while another
// thread (sharing it: CLONE_FS) flips it between a plain directory and one
// holding HEAD and objects: a supervisor that looked up the working
// directory again after its check would complete the repository (found
// by a red-team pass).
const bindRaceC = `#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
static int safe, evil;
static volatile int stop;
static void *flip(void *arg) {
	while (!stop) { fchdir(evil); fchdir(safe); }
	return arg;
}
int main(int argc, char **argv) {
	int n = atoi(argv[1]), ok = 0;
	pthread_t t;
	struct sockaddr_un a;
	safe = open("safe", O_RDONLY | O_DIRECTORY);
	evil = open("evil", O_RDONLY | O_DIRECTORY);
	fchdir(safe);
	pthread_create(&t, 0, flip, 0);
	for (int i = 0; i < n; i++) {
		int s = socket(AF_UNIX, SOCK_STREAM, 0);
		memset(&a, 0, sizeof a);
		a.sun_family = AF_UNIX;
		strcpy(a.sun_path, "refs");
		if (bind(s, (struct sockaddr *)&a, sizeof a) == 0) { ok++; unlinkat(safe, "refs", 0); }
		close(s);
		if (faccessat(evil, "refs", F_OK, AT_SYMLINK_NOFOLLOW) == 0) break;
	}
	stop = 1;
	pthread_join(t, 0);
	printf("bound %d evil %d\n", ok, faccessat(evil, "refs", F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	return 0;
}
`

// TestT1NewNamesUnixSocket: a Unix socket bound to a path is a new name
// too, and one named refs beside a HEAD and objects makes git take the
// directory for a repository (access(X_OK) passes a socket): open with the
// class waived, refused under the supervisor, which still binds other
// paths, abstract names and the run's own sockets as the kernel would.
func TestT1NewNamesUnixSocket(t *testing.T) {
	requireNewNames(t)
	const script = `
mkdir -p sk/objects && echo "ref: refs/heads/main" > sk/HEAD
try sock-refs '/usr/bin/python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"sk/refs\")"'
try sock-git '/usr/bin/python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\".git\")"'
try sock-ok 'umask 077 && /usr/bin/python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"ok.sock\")" && test -S ok.sock && test "$(stat -c %a ok.sock)" = 700'
try sock-abstract '/usr/bin/python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"\\0procage-abstract\")"'
try sock-inuse '/usr/bin/python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"ok.sock\")"'
try sock-name 'mkdir -p sd && /usr/bin/python3 -c "
import socket
s = socket.socket(socket.AF_UNIX)
s.bind(\"sd/n.sock\")
assert s.getsockname() == \"sd/n.sock\", s.getsockname()
s.listen()
c = socket.socket(socket.AF_UNIX)
c.connect(s.getsockname())
"'
`
	for _, waived := range []bool{true, false} {
		w := tempHome(t)
		opts := []profile.Option{profile.Fork(), profile.ReadWrite(w), profile.UnixSocket(filepath.Join(w, "s0")), profile.AcceptGaps(profile.GapUnixSocketPath)}
		if waived {
			opts = append(opts, profile.Waive(profile.TrustHandoff))
		}
		c := newCage(t, policy(t, opts...), cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
		got := t1Results(t, c, w, script)
		if waived {
			want(t, got, "sock-refs", "ok")
			continue
		}
		want(t, got, "sock-refs", "Operation not permitted")
		want(t, got, "sock-git", "Operation not permitted")
		want(t, got, "sock-ok", "ok")
		want(t, got, "sock-abstract", "ok")
		want(t, got, "sock-inuse", "Address already in use")
		want(t, got, "sock-name", "ok") // the name as bound (multiprocessing connects to it)
		for _, p := range []string{"sk/refs", ".git"} {
			if _, err := os.Lstat(filepath.Join(w, p)); err == nil {
				t.Errorf("%s exists on the host", p)
			}
		}
	}

	// The working directory flipped during the bind.
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testenv.Skip(t, testenv.ReasonNoProgram, "gcc is not on PATH: "+err.Error())
	}
	bin := tempHome(t)
	if err := os.WriteFile(filepath.Join(bin, "bindrace.c"), []byte(bindRaceC), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-O1", "-pthread", "-o", filepath.Join(bin, "bindrace"), filepath.Join(bin, "bindrace.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v %s", err, out)
	}
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	w := tempHome(t)
	for _, d := range []string{"safe", "evil/objects"} {
		if err := os.MkdirAll(filepath.Join(w, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w, "evil/HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCage(t, policy(t, profile.ReadWrite(w), profile.Exec(bin), profile.UnixSocket(filepath.Join(w, "s0")), profile.AcceptGaps(profile.GapUnixSocketPath)),
		cage.WithLinuxTier(cage.TierT1), cage.WithHome(tempHome(t)))
	out, errs, err := runIn(t, c, w, filepath.Join(bin, "bindrace"), "2000")
	var bound, evil int
	if _, serr := fmt.Sscanf(out, "bound %d evil %d", &bound, &evil); err != nil || serr != nil || evil != 0 || bound == 0 {
		t.Errorf("bind race: %v, stdout %q, stderr %q; want binds in safe only", err, out, errs)
	}
	if _, err := os.Lstat(filepath.Join(w, "evil/refs")); err == nil {
		t.Error("evil/refs exists on the host: the repository was completed")
	}
}
