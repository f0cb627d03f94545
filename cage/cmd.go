package cage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/procage-go/procage/pathresolve"
	"github.com/procage-go/procage/profile"
)

// Grant binds a path to one spawn as a sandbox extension: the parent
// issues a token for the path's kernel spelling, the child consumes it
// after its profile applies. A grant on a case-sensitive volume is a
// [*CaseSensitiveError].
type Grant struct {
	Path  string // absolute
	Write bool   // read-write; false: read-only
}

// Cmd is a caged command, shaped like os/exec.Cmd. Build it with
// [Cage.Command]; a Cmd cannot be reused after Start.
type Cmd struct {
	// Path is the absolute path of the executable.
	Path string
	// Args holds the command line, Args[0] included.
	Args []string
	// Env: nil inherits the caller's environment filtered by the cage's
	// EnvPolicy; non-nil is passed exactly as written.
	Env []string
	// Dir is the working directory; "" inherits the caller's.
	Dir string
	// Stdin, Stdout and Stderr: nil is the null device; an *os.File is
	// passed directly; anything else goes through a pipe copied by a
	// goroutine, as in os/exec.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Grants are paths bound to this spawn only.
	Grants []Grant

	// Process is the started child; ProcessState its state after Wait.
	Process      *os.Process
	ProcessState *os.ProcessState

	// Err is a lookup error from Command, returned by Start.
	Err error

	cage       *Cage
	ctx        context.Context
	run        *run   // per-OS state of a started run
	execTarget string // the target's kernel spelling, for ExecTargetOnly
}

// Command returns a Cmd that runs name with args inside the cage. A name
// without a slash is looked up in PATH as exec.LookPath does; the result
// must be absolute. When ctx is done, the run is ended as by [Cmd.Kill].
func (c *Cage) Command(ctx context.Context, name string, args ...string) *Cmd {
	if ctx == nil {
		panic("cage: Command with a nil Context")
	}
	cmd := &Cmd{Path: name, Args: append([]string{name}, args...), cage: c, ctx: ctx}
	if !strings.Contains(name, "/") {
		lp, err := exec.LookPath(name)
		if lp != "" {
			cmd.Path = lp
		}
		if err != nil {
			cmd.Err = err
			return cmd
		}
	}
	if !filepath.IsAbs(cmd.Path) {
		cmd.Err = &exec.Error{Name: name, Err: errors.New("the executable path is not absolute; give an absolute path")}
	}
	return cmd
}

// String returns the command line, for diagnostics.
func (cmd *Cmd) String() string {
	return strings.Join(append([]string{cmd.Path}, cmd.Args[min(1, len(cmd.Args)):]...), " ")
}

// Start starts the caged child and returns without waiting. The target
// runs only once its profile is in force; if any set-up step fails it never
// runs and Start returns an [*ApplyError]. Off macOS Start returns an
// [*UnsupportedError] and nothing runs.
func (cmd *Cmd) Start() error {
	if cmd.cage == nil {
		return errors.New("cage: Cmd not built with Cage.Command")
	}
	if cmd.Process != nil || cmd.run != nil {
		return errors.New("cage: already started")
	}
	if cmd.Err != nil {
		return cmd.Err
	}
	if !filepath.IsAbs(cmd.Path) {
		return &exec.Error{Name: cmd.Path, Err: errors.New("the executable path is not absolute; give an absolute path")}
	}
	if len(cmd.Args) == 0 {
		cmd.Args = []string{cmd.Path}
	}
	if err := cmd.ctx.Err(); err != nil {
		return err
	}
	var r *pathresolve.Resolver
	if len(cmd.Grants) > 0 || cmd.cage.policy.ExecTargetOnly() {
		// One resolver for everything this spawn names, sharing its cache.
		var err error
		if r, err = cmd.cage.grantResolver(); err != nil {
			return err
		}
	}
	grants, err := cmd.cage.resolveGrants(r, cmd.Grants)
	if err != nil {
		return err
	}
	// The child's own terminal, and no other, is granted per spawn.
	grants = append(grants, terminalGrants(cmd.Stdin, cmd.Stdout, cmd.Stderr)...)
	if cmd.cage.policy.ExecTargetOnly() {
		// The profile names the target as the kernel sees it.
		res, err := r.Resolve(cmd.Path)
		if err != nil {
			return fmt.Errorf("cage: resolving the target: %w", err)
		}
		cmd.execTarget = res.Path
	}
	return cmd.start(grants)
}

// Wait waits for the child to exit, then ends the run: for a forking
// policy it finds every process still carrying the run's marker and kills
// it, in rounds (see the package documentation), then waits for the
// stdio copies and removes the run's private temporary directory. A
// non-zero exit is an *exec.ExitError; a run ended by its context returns
// the context's error. If processes of the run survive every kill round,
// the error also wraps [ErrRunNotEnded] (test with errors.Is / errors.As).
func (cmd *Cmd) Wait() error {
	if cmd.run == nil {
		return errors.New("cage: not started")
	}
	return cmd.wait()
}

// Kill ends the run now: it kills the child and, for a forking policy,
// every process carrying the run's marker. Wait must still be called to
// reap the child.
func (cmd *Cmd) Kill() error {
	if cmd.run == nil {
		return errors.New("cage: not started")
	}
	return cmd.kill()
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
	if cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, errors.New("cage: Stdout or Stderr already set")
	}
	var b syncBuffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	return b.Bytes(), err
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

// grant is a resolved Grant: kernel spelling and extension class.
type grant struct {
	path  string
	class string
}

// resolveGrants resolves each grant to its kernel spelling through r (see
// grantResolver), refuses grants on case-sensitive volumes and grants
// through a suspect link (pathresolve.CheckLinks, with the policy's trees
// and this spawn's grants as trees).
func (c *Cage) resolveGrants(r *pathresolve.Resolver, gs []Grant) ([]grant, error) {
	var out []grant
	var results []pathresolve.Result
	var writes []bool
	trees := slices.Clone(c.trees)
	for _, g := range gs {
		res, err := r.Resolve(g.Path)
		if err != nil {
			return nil, fmt.Errorf("cage: grant: %w", err)
		}
		if res.CaseSensitive {
			return nil, &CaseSensitiveError{Path: res.Path, Volume: res.Volume}
		}
		results, writes = append(results, res), append(writes, g.Write)
		trees = append(trees, pathresolve.Tree{Path: res.Path, Writable: g.Write})
		class := profile.ExtensionRead
		if g.Write {
			class = profile.ExtensionReadWrite
		}
		out = append(out, grant{path: res.Path, class: class})
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
		return nil, fmt.Errorf("cage: %w", err)
	}
	return r, nil
}
