package cage

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/procage-go/procage/internal/egress"
	"github.com/procage-go/procage/internal/forkexec"
	"github.com/procage-go/procage/pathresolve"
)

// Grant binds a path to one spawn: on macOS as a sandbox extension the
// parent issues for the path's kernel spelling and the child consumes
// after its profile applies. For the macOS backend a grant on a
// case-sensitive volume is refused ([ErrCaseSensitive]).
type Grant struct {
	Path  string // absolute
	Write bool   // read-write; false: read-only
}

// Cmd is a caged command, shaped like os/exec.Cmd and with its semantics
// where a cage allows them. Build it with [Cage.Command]; a Cmd cannot be
// reused after Start, and Start may be called only once, even after it
// failed.
type Cmd struct {
	// Path is the path of the executable. A relative path (one with a
	// slash, as "./script.sh") is resolved against Dir at Start, as the
	// kernel would resolve it in the child (os/exec passes it as is).
	Path string
	// Args holds the command line, Args[0] included; empty means {Path}.
	Args []string
	// Env: nil inherits the caller's environment, filtered as the cage
	// says ([WithEnvAllowlist], [IsSecret]), plus PWD when Dir is set, as
	// os/exec does; non-nil is passed exactly as written.
	Env []string
	// Dir is the working directory; "" inherits the caller's.
	Dir string
	// Stdin, Stdout and Stderr: nil is the null device; an *os.File is
	// passed directly; anything else goes through a pipe copied by a
	// goroutine, as in os/exec. On Linux at T1 the child opens the null
	// device itself through its read-only view; for root it opens each
	// terminal again there, and an *os.File that is no pipe, socket or
	// terminal goes through a pipe too (see the package's Limitations).
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// ExtraFiles are open files the child inherits: entry i becomes
	// descriptor 3+i. Unlike os/exec, a nil entry is refused by Start (the
	// child's descriptor shuffle has no "closed" slot); so is, for root
	// on Linux at T1, an entry that is no pipe, socket or terminal. Every
	// other descriptor is closed on exec.
	ExtraFiles []*os.File
	// Grants are paths bound to this spawn only.
	Grants []Grant

	// Cancel is called when the Command's context is done before the child
	// exits. Command sets it to end the run as [Cmd.Kill] does; a caller may
	// replace it (for example to send SIGTERM first) or set it to nil. As in
	// os/exec: if Cancel returns nil, Wait reports the context's error; if
	// it returns an error other than os.ErrProcessDone, Wait reports that.
	// Whatever Cancel does, Wait still ends the run's other processes.
	Cancel func() error
	// WaitDelay bounds the time Wait waits, once the context is done or the
	// child has exited, for the I/O copies to finish, as in os/exec: after
	// it the run is ended as by Kill and the pipes are closed, and an
	// otherwise successful Wait returns exec.ErrWaitDelay. Zero waits for
	// the copies without bound.
	WaitDelay time.Duration

	// Process is the started child; ProcessState its state after Wait.
	Process      *os.Process
	ProcessState *os.ProcessState

	// Err is a lookup error from Command, returned by Start.
	Err error

	cage      *Cage
	ctx       context.Context
	started   atomic.Bool
	skipProbe bool // the probes' own child
	// proxy is the run's egress proxy (a proxy-mode policy) until Wait
	// stops it; netLog its record after.
	proxyMu    sync.Mutex
	proxy      *egress.Proxy
	fwd        *forwarder // a Linux T1 loopback run's forwarded host ports
	netLog     []NetRequest
	netDropped NetDropped
	execTarget string // the target's kernel spelling, for ExecTargetOnly

	run           *run
	childIOFiles  []io.Closer // closed once Start returns
	parentIOPipes []io.Closer // closed by Wait, or by a failed Start
	goroutine     []func() error
	goroutineErr  <-chan error
	ctxResult     <-chan ctxResult
}

// run is the state of one started run.
type run struct {
	pid     int
	init    int    // the run's pid namespace's pid 1, reaped after pid; 0 without one
	marker  string // "" unless the policy forks
	tempDir string
	// tempMade is tempDir as created, so that removal touches it only.
	tempMade os.FileInfo

	mu     sync.Mutex
	waited bool // set before the child is reaped
	reaped bool // set once it is
	ended  bool // set once Wait has ended the run
}

// Command returns a Cmd that runs name with args inside the cage. A name
// without a slash is looked up in PATH as exec.LookPath does (a result
// relative to the current directory is exec.ErrDot). When ctx is done
// before the child exits, Cancel is called; by default it ends the run as
// [Cmd.Kill] does.
func (c *Cage) Command(ctx context.Context, name string, args ...string) *Cmd {
	if ctx == nil {
		panic("cage: nil Context")
	}
	cmd := &Cmd{Path: name, Args: append([]string{name}, args...), cage: c, ctx: ctx}
	cmd.Cancel = cmd.cancelRun
	if !strings.Contains(name, "/") {
		lp, err := exec.LookPath(name)
		if lp != "" {
			cmd.Path = lp
		}
		if err != nil {
			cmd.Err = err
		}
	}
	return cmd
}

// String returns the command line, for diagnostics.
func (cmd *Cmd) String() string {
	return strings.Join(append([]string{cmd.Path}, cmd.Args[min(1, len(cmd.Args)):]...), " ")
}

// absPath is the executable's absolute path: Path, or a relative Path
// joined to Dir (itself joined to the current directory if relative), not
// cleaned, so ".." after a link means what it means to the kernel.
func (cmd *Cmd) absPath() (string, error) {
	if filepath.IsAbs(cmd.Path) {
		return cmd.Path, nil
	}
	dir := cmd.Dir
	if !filepath.IsAbs(dir) {
		wd, err := os.Getwd()
		if err != nil {
			return "", &exec.Error{Name: cmd.Path, Err: err}
		}
		if dir != "" {
			dir = wd + "/" + dir
		} else {
			dir = wd
		}
	}
	return strings.TrimSuffix(dir, "/") + "/" + cmd.Path, nil
}

// Start starts the caged child and returns without waiting. The target
// runs only once its sandbox is in force; if any set-up step fails it never
// runs and Start returns an [*ApplyError]. Where the cage's backend cannot
// be enforced (another OS's backend, no sandbox on this OS, a failed
// [Probe]) Start returns an [*UnsupportedError] and nothing runs.
func (cmd *Cmd) Start() error { return policyError(cmd.start()) }

func (cmd *Cmd) start() error {
	if cmd.cage == nil {
		return errors.New("cage: Cmd not made by Cage.Command")
	}
	// As os/exec: a second Start fails even if the first started nothing,
	// and concurrent Starts cannot both start a child.
	if cmd.started.Swap(true) {
		return errors.New("cage: already started")
	}
	started := false
	defer func() {
		closeAll(cmd.childIOFiles)
		cmd.childIOFiles = nil
		if !started {
			closeAll(cmd.parentIOPipes)
			cmd.parentIOPipes = nil
			cmd.goroutine = nil
		}
	}()
	if cmd.Err != nil {
		return cmd.Err
	}
	if cmd.Path == "" {
		return errors.New("cage: no command")
	}
	path, err := cmd.absPath()
	if err != nil {
		return err
	}
	if err := cmd.ctx.Err(); err != nil {
		return err
	}
	c := cmd.cage
	var r *pathresolve.Resolver
	if len(cmd.Grants) > 0 || c.policy.ExecTargetOnly() {
		// One resolver for everything this spawn names, sharing its cache.
		if r, err = c.grantResolver(); err != nil {
			return err
		}
	}
	grants, err := c.resolveGrants(r, cmd.Grants)
	if err != nil {
		return err
	}
	// Seatbelt: the child's own terminal, and no other, is granted per
	// spawn. Landlock does not check descriptors opened before the
	// ruleset, so on Linux the inherited terminal works without a rule,
	// and a write grant would be refused as a writable tree.
	if c.cfg.backend == BackendMacOS {
		grants = append(grants, terminalGrants(cmd.Stdin, cmd.Stdout, cmd.Stderr)...)
	}
	if c.policy.ExecTargetOnly() {
		// The sandbox names the target as the kernel sees it.
		res, err := r.Resolve(path)
		if err != nil {
			return err // a *pathresolve.PathError naming the target
		}
		cmd.execTarget = res.Path
	}
	if !cmd.skipProbe {
		if err := c.be.probe(c.policy.Forking()); err != nil {
			return err
		}
	}
	if err := cmd.startRun(path, grants); err != nil {
		return err
	}
	started = true
	return nil
}

// Wait waits for the child to exit, then ends the run: its backend finds
// the run's remaining processes (a forking run's descendants, wherever
// they were reparented) and kills them in rounds (see the package
// documentation); then Wait waits for the stdio copies and removes the
// run's private temporary directory.
//
// A non-zero exit is an *exec.ExitError; a run ended by its context (Cancel
// returned nil) returns the context's error instead. If processes of the
// run survived every kill round or could not be checked, the error also
// wraps [ErrRunNotEnded] (test with errors.Is / errors.As): that is never
// hidden behind the exit status. Likewise a private temporary directory
// that could not be removed adds [ErrTempNotRemoved], with an *fs.PathError
// naming it.
func (cmd *Cmd) Wait() error {
	r := cmd.run
	if r == nil {
		return errors.New("cage: not started")
	}
	r.mu.Lock()
	if r.waited {
		r.mu.Unlock()
		return errors.New("cage: Wait was already called")
	}
	r.waited = true
	r.mu.Unlock()

	state, err := cmd.Process.Wait()
	if r.init > 0 {
		// The namespace's pid 1 has ended (or is ending) with the target,
		// and the kernel with it every other process of the run.
		_, _ = forkexec.Wait(r.init)
	}
	if err == nil && !state.Success() {
		err = &exec.ExitError{ProcessState: state}
	}
	r.mu.Lock()
	r.reaped = true
	r.mu.Unlock()
	// End the rest of the run before waiting for the copies: an escaped
	// descendant holding a pipe open would otherwise block them.
	endErr := cmd.cage.be.endRun(r, true)
	r.mu.Lock()
	r.ended = true
	r.mu.Unlock()
	cmd.ProcessState = state
	// Every process of the run is gone: its proxy's record is complete.
	cmd.stopProxy()

	var timer *time.Timer
	if cmd.ctxResult != nil {
		watch := <-cmd.ctxResult
		timer = watch.timer
		_, exited := err.(*exec.ExitError)
		if watch.err != nil && (err == nil || watch.ctx && exited) {
			// The context ended the run: its error explains the exit
			// (os/exec would report the exit status; a cage has always
			// reported the context).
			err = watch.err
		}
	}
	if gerr := cmd.awaitGoroutines(timer); err == nil {
		err = gerr
	}
	closeAll(cmd.parentIOPipes)
	cmd.parentIOPipes = nil
	var tempErr error
	if r.tempDir != "" {
		tempErr = removeTemp(r.tempDir, r.tempMade)
	}
	cmd.cage.endRun()
	if endErr != nil || tempErr != nil {
		// errors.Is/As still find each.
		return errors.Join(err, endErr, tempErr)
	}
	return err
}

// Kill ends the run now: it kills the child and the run's other processes
// (its process group, and for a forking run every process its backend
// finds). Wait must still be called to reap the child.
func (cmd *Cmd) Kill() error {
	if cmd.run == nil {
		return errors.New("cage: not started")
	}
	err := cmd.killRun()
	if errors.Is(err, os.ErrProcessDone) {
		return nil
	}
	return err
}

// cancelRun is the default Cancel: Kill, reporting os.ErrProcessDone when
// the child had already been reaped (as os/exec's default Cancel does).
func (cmd *Cmd) cancelRun() error { return cmd.killRun() }

func (cmd *Cmd) killRun() error {
	r := cmd.run
	// Signal while holding r.mu: Wait sets r.waited under r.mu before it
	// reaps, so while r.waited is false and the lock is held the child
	// cannot be reaped and -pid still names its session or group (until it
	// is reaped the id cannot be reused).
	r.mu.Lock()
	if r.ended {
		// Nothing of the run is left, and its ids may be reused.
		r.mu.Unlock()
		return os.ErrProcessDone
	}
	err := cmd.Process.Kill()
	if !r.waited {
		_ = killGroup(r.pid)
	}
	reaped := r.reaped
	r.mu.Unlock()
	// A failed direct kill must not skip the backend's search.
	if endErr := cmd.cage.be.endRun(r, reaped); endErr != nil {
		if errors.Is(err, os.ErrProcessDone) {
			err = nil
		}
		return errors.Join(err, endErr)
	}
	return err
}

// Run starts the command and waits for it.
func (cmd *Cmd) Run() error {
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Wait()
}

// Output runs the command and returns its standard output. If Stderr is
// nil, a failure's *exec.ExitError carries the start of standard error.
func (cmd *Cmd) Output() ([]byte, error) {
	if cmd.Stdout != nil {
		return nil, errors.New("cage: Stdout already set")
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	var stderr *prefixBuffer
	if cmd.Stderr == nil {
		stderr = &prefixBuffer{n: 32 << 10}
		cmd.Stderr = stderr
	}
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && stderr != nil {
		ee.Stderr = stderr.b.Bytes()
	}
	return stdout.Bytes(), err
}

// CombinedOutput runs the command and returns standard output and standard
// error together.
func (cmd *Cmd) CombinedOutput() ([]byte, error) {
	if cmd.Stdout != nil {
		return nil, errors.New("cage: Stdout already set")
	}
	if cmd.Stderr != nil {
		return nil, errors.New("cage: Stderr already set")
	}
	var b syncBuffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.Bytes(), err
}

// StdinPipe returns a pipe connected to the child's standard input when it
// starts. Wait closes it after the child exits; the caller may close it
// earlier to send end-of-file.
func (cmd *Cmd) StdinPipe() (io.WriteCloser, error) {
	if cmd.Stdin != nil {
		return nil, errors.New("cage: Stdin already set")
	}
	if cmd.started.Load() {
		return nil, errors.New("cage: StdinPipe after process started")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdin = pr
	cmd.childIOFiles = append(cmd.childIOFiles, pr)
	cmd.parentIOPipes = append(cmd.parentIOPipes, pw)
	return pw, nil
}

// StdoutPipe returns a pipe connected to the child's standard output when
// it starts. Wait closes it after the child exits, so, as with os/exec,
// all reads must be done before Wait is called, and Run cannot be used.
func (cmd *Cmd) StdoutPipe() (io.ReadCloser, error) {
	if cmd.Stdout != nil {
		return nil, errors.New("cage: Stdout already set")
	}
	if cmd.started.Load() {
		return nil, errors.New("cage: StdoutPipe after process started")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	cmd.childIOFiles = append(cmd.childIOFiles, pw)
	cmd.parentIOPipes = append(cmd.parentIOPipes, pr)
	return pr, nil
}

// StderrPipe is StdoutPipe for standard error.
func (cmd *Cmd) StderrPipe() (io.ReadCloser, error) {
	if cmd.Stderr != nil {
		return nil, errors.New("cage: Stderr already set")
	}
	if cmd.started.Load() {
		return nil, errors.New("cage: StderrPipe after process started")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = pw
	cmd.childIOFiles = append(cmd.childIOFiles, pw)
	cmd.parentIOPipes = append(cmd.parentIOPipes, pr)
	return pr, nil
}

// Environ returns a copy of the environment the child would get as the
// command is now configured: Env as written, or the caller's environment
// filtered by the cage's environment policy plus PWD for Dir. A private TMPDIR
// ([WithPrivateTemp]) is chosen by Start and is not included.
func (cmd *Cmd) Environ() []string {
	env, _ := cmd.environ()
	return env
}

// environ builds the child's environment; extra entries (a private
// TMPDIR) are added unless an explicit Env names them.
func (cmd *Cmd) environ(extra ...string) ([]string, error) {
	var base []string
	var err error
	if cmd.Env == nil && cmd.Dir != "" {
		// As os/exec (go.dev/issue/50599): PWD follows Dir only when Env is nil.
		pwd, absErr := filepath.Abs(cmd.Dir)
		if absErr != nil {
			err = absErr
		} else {
			extra = append([]string{"PWD=" + pwd}, extra...)
		}
	}
	var p envPolicy
	if cmd.cage != nil {
		p = cmd.cage.cfg.env
	}
	base = environ(p, cmd.Env, os.Environ(), extra...)
	env, dupErr := dedupEnv(base)
	if err == nil {
		err = dupErr
	}
	return env, err
}

// dedupEnv keeps the last entry of each key, as os/exec does, and drops
// entries containing NUL.
func dedupEnv(env []string) ([]string, error) {
	var err error
	out := make([]string, 0, len(env))
	saw := map[string]bool{}
	for i := len(env) - 1; i >= 0; i-- {
		kv := env[i]
		if strings.IndexByte(kv, 0) >= 0 {
			err = errors.New("cage: environment variable contains NUL")
			continue
		}
		k, _, ok := strings.Cut(kv, "=")
		if ok && saw[k] {
			continue
		}
		saw[k] = true
		out = append(out, kv)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, err
}

// prefixBuffer keeps the first n bytes written.
type prefixBuffer struct {
	b bytes.Buffer
	n int
}

func (w *prefixBuffer) Write(p []byte) (int, error) {
	if room := w.n - w.b.Len(); room > 0 {
		w.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.b.Bytes())
}

// resolveGrants resolves each grant to its kernel spelling through r (see
// grantResolver), refuses grants through a suspect link
// (pathresolve.CheckLinks, with the policy's trees and this spawn's grants
// as trees) and, for the macOS backend, grants on case-sensitive volumes.
func (c *Cage) resolveGrants(r *pathresolve.Resolver, gs []Grant) ([]grant, error) {
	var out []grant
	var results []pathresolve.Result
	var writes []bool
	trees := slices.Clone(c.trees)
	for _, g := range gs {
		res, err := r.Resolve(g.Path)
		if err != nil {
			return nil, err // a *pathresolve.PathError naming the grant
		}
		if res.CaseSensitive && c.cfg.backend == BackendMacOS {
			return nil, &pathresolve.CaseSensitiveError{Path: res.Path, Volume: res.Volume}
		}
		results, writes = append(results, res), append(writes, g.Write)
		trees = append(trees, pathresolve.Tree{Path: res.Path, Writable: g.Write})
		out = append(out, grant{path: res.Path, write: g.Write})
	}
	for i, res := range results {
		if err := pathresolve.CheckLinks(res, writes[i], trees, c.cfg.acceptedLink); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// grantResolver resolves paths named at spawn time (grants, the target):
// through the cage's file-system view if WithFS set one, else through a
// fresh host resolver, so changes since New are seen.
func (c *Cage) grantResolver() (*pathresolve.Resolver, error) {
	if c.cfg.fsSet {
		return c.resolver, nil
	}
	r, err := pathresolve.NewHost()
	if err != nil {
		return nil, err
	}
	return r, nil
}
