package tests

// Escape canaries for paths looked up by name twice: once to check for
// suspect links, once more to open for the Landlock rule. A caged run
// that can write a tree can change what a name there means in between,
// or after New, so every path is now opened once, without following a
// link, and the rule stays bound to the inode opened
// (docs/linux-backend.md, "Paths are opened once").

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/procage-go/procage/internal/testenv"

	"golang.org/x/sys/unix"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/profile"
)

// exchangeHelper is the helper name of a caged process that swaps two
// names with renameat2(RENAME_EXCHANGE) until it is killed (at most a
// minute).
const exchangeHelper = "exchange-names"

func init() {
	// Runs before TestMain, so this file's helper needs no entry in the
	// shared helper table.
	if os.Getenv(helperEnv) != exchangeHelper {
		return
	}
	a, b := os.Args[1], os.Args[2]
	n := 0
	for end := time.Now().Add(time.Minute); time.Now().Before(end); {
		if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
			fmt.Println("renameat2:", err)
			os.Exit(1)
		}
		n++
	}
	fmt.Println(n)
	os.Exit(0)
}

// swapTree makes proj/sub (a directory), proj/sublink -> victim (a
// directory outside proj) and a cage that may write proj, whose caged run
// swaps the two names in a loop until the returned stop is called.
// seen reports whether the test has observed proj/sub as a link.
func swapTree(t *testing.T) (c *cage.Cage, proj, sub, victim string, seen func() bool, stop func()) {
	t.Helper()
	proj, victim = tempHome(t), tempHome(t)
	sub = filepath.Join(proj, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(proj, "sublink")); err != nil {
		t.Fatal(err)
	}
	c = newCage(t, policy(t, profile.ReadWrite(proj), profile.Exec(testBinaryDir(t)), profile.Waive(profile.TrustHandoff)),
		cage.WithHome(tempHome(t)))
	ctx, cancel := context.WithCancel(context.Background())
	swapper := c.Command(ctx, os.Args[0], sub, filepath.Join(proj, "sublink"))
	swapper.Env = []string{helperEnv + "=" + exchangeHelper}
	var out strings.Builder
	swapper.Stdout, swapper.Stderr = &out, &out
	if err := swapper.Start(); err != nil {
		cancel()
		t.Fatalf("starting the caged swapper: %v", err)
	}
	link := false
	seen = func() bool {
		if fi, err := os.Lstat(sub); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			link = true
		}
		return link
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		_ = swapper.Wait()
		if strings.Contains(out.String(), "renameat2") {
			t.Errorf("the caged swapper failed: %s", out.String())
		}
		// Leave the names as they were, so t.TempDir's cleanup does not
		// follow the link.
		if fi, err := os.Lstat(sub); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			_ = unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, filepath.Join(proj, "sublink"), unix.RENAME_EXCHANGE)
		}
	}
	t.Cleanup(stop)
	return c, proj, sub, victim, seen, stop
}

// TestLinuxEscapeLinkSwapGrant (issue 20, item 2): a caged run with a
// writable tree swaps proj/sub (a directory) and proj/sublink -> victim
// with renameat2(RENAME_EXCHANGE) in a loop. Another spawn's write grant
// of proj/sub, or another cage's write policy on it, must never become a
// write rule on victim. The name is checked for links (pathresolve
// CheckLinks) and was then opened again by name, following the link the
// swap had put there in between: of 100 attempts that got past the check,
// 21 to 49 wrote victim (grant and policy, root and nobody). Now it is
// opened without following links and the descriptor is checked to be at
// the checked spelling: each attempt binds the real directory or fails
// with cage.ErrPathChanged.
func TestLinuxEscapeLinkSwapGrant(t *testing.T) {
	requireCage(t)
	for _, via := range []string{"grant", "policy"} {
		t.Run(via, func(t *testing.T) {
			c, proj, sub, victim, seen, stop := swapTree(t)
			pwned := filepath.Join(victim, "pwned")
			home := tempHome(t)
			var escaped, ran, refused, changed int
			var why []string
			// Wait for the swap to run, then try until 100 attempts got as
			// far as running (about half are refused at resolution, when the
			// link is in place), within 10 s.
			for end := time.Now().Add(5 * time.Second); !seen() && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
			attempts := 0
			for end := time.Now().Add(10 * time.Second); ran < 100 && attempts < 20000 && time.Now().Before(end); attempts++ {
				sh := []string{"/bin/sh", "-c", "echo x > " + pwned}
				var err error
				var o, e string
				switch via {
				case "grant":
					cmd := c.Command(t.Context(), sh[0], sh[1:]...)
					cmd.Grants = []cage.Grant{{Path: sub, Write: true}}
					var ob, eb strings.Builder
					cmd.Stdout, cmd.Stderr = &ob, &eb
					if err = cmd.Start(); err == nil {
						err = cmd.Wait()
						ran++
					} else {
						refused++
						why = append(why, err.Error())
						if errors.Is(err, cage.ErrPathChanged) {
							changed++
						}
					}
					o, e = ob.String(), eb.String()
				case "policy":
					// procage run --write proj --write proj/sub, as a second
					// cage: its New looks sub up while the first cage's run
					// swaps it.
					c2, nerr := cage.New(policy(t, profile.ReadWrite(proj), profile.ReadWrite(sub), profile.Waive(profile.TrustHandoff)),
						cage.WithHome(home))
					if nerr != nil {
						refused++
						why = append(why, nerr.Error())
						if errors.Is(nerr, cage.ErrPathChanged) {
							changed++
						}
						continue
					}
					ran++
					o, e, err = run(t, c2, sh[0], sh[1:]...)
				}
				if _, serr := os.Stat(pwned); serr == nil {
					if escaped++; escaped == 1 {
						t.Logf("attempt %d wrote %s: %v %q %q", attempts, pwned, err, o, e)
					}
					os.Remove(pwned)
				}
			}
			stop()
			t.Logf("%d attempts: %d wrote victim, %d ran, %d refused at start (%d found the path changed after the link check)",
				attempts, escaped, ran, refused, changed)
			if len(why) > 0 {
				t.Logf("first refusal: %s", why[0])
			}
			if !seen() {
				t.Fatal("proj/sub was never seen as a link: the swap did not run, the canary proves nothing")
			}
			if ran == 0 {
				t.Errorf("no attempt ran: a grant of a real directory must still work")
			}
			if escaped > 0 {
				t.Errorf("a write %s of %s became a write rule on %s in %d of %d attempts", via, sub, victim, escaped, attempts)
			}
		})
	}
}

// TestLinuxEscapeCageReopensPolicyPath (issue 20, item 3): a long-lived
// Cage's policy rules stay bound to the inodes New opened. proj is
// writable and proj/tools is a policy path (absent at New, or a
// directory). Run 1 puts a link proj/tools -> secret there; run 2 of the
// same cage reads secret. A spawn with a grant, a private temporary
// directory or a terminal builds its own ruleset, and built it from the
// policy's paths by name again, following the link (the policy's own
// ruleset, used by a spawn without any of these, is bound to inodes and
// held: the control). Now every per-spawn ruleset re-adds the policy rules
// from the descriptors New opened.
func TestLinuxEscapeCageReopensPolicyPath(t *testing.T) {
	requireCage(t)
	for _, shape := range []string{"absent", "directory"} {
		for _, trigger := range []string{"none", "grant", "private temp", "terminal"} {
			t.Run(shape+"/"+trigger, func(t *testing.T) {
				proj, outside := tempHome(t), tempHome(t)
				secret := filepath.Join(outside, "secret")
				if err := os.WriteFile(secret, []byte("s3cret"), 0o644); err != nil {
					t.Fatal(err)
				}
				tools := filepath.Join(proj, "tools")
				if shape == "directory" {
					if err := os.Mkdir(tools, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				opts := []cage.Option{cage.WithHome(tempHome(t))}
				if trigger == "private temp" {
					opts = append(opts, cage.WithPrivateTemp())
				}
				c := newCage(t, policy(t, profile.Fork(), profile.ReadWrite(proj), profile.Read(tools), profile.Waive(profile.TrustHandoff)), opts...)

				// Run 1 plants the link.
				plant := "ln -s " + outside + " " + tools
				if shape == "directory" {
					plant = "mv " + tools + " " + tools + ".old && " + plant
				}
				if o, e, err := run(t, c, "/bin/sh", "-c", plant); err != nil {
					t.Fatalf("run 1 (%s): %v %q %q", plant, err, o, e)
				}
				if dst, err := os.Readlink(tools); err != nil || dst != outside {
					t.Fatalf("run 1 left %s -> %q (%v)", tools, dst, err)
				}

				// Run 2 reads the secret, by its own name and through the link.
				for _, p := range []string{secret, filepath.Join(tools, "secret")} {
					cmd := c.Command(t.Context(), "/bin/cat", p)
					var out, errb strings.Builder
					cmd.Stdout, cmd.Stderr = &out, &errb
					switch trigger {
					case "grant":
						cmd.Grants = []cage.Grant{{Path: tempHome(t)}}
					case "terminal":
						cmd.Stdin = openPTYSlave(t)
					}
					err := cmd.Run()
					if strings.Contains(out.String(), "s3cret") {
						t.Errorf("run 2 (%s) read %s through a link run 1 planted at the policy path %s", trigger, p, tools)
						continue
					}
					mustRefuse(t, "cat "+p, out.String(), errb.String(), err)
				}
				if shape == "directory" {
					// The rule still holds the directory New opened, wherever
					// it now is.
					if o, e, err := run(t, c, "/bin/ls", tools+".old"); err != nil {
						t.Errorf("ls %s.old: %v %q %q", tools, err, o, e)
					}
				}
			})
		}
	}
}

// openPTYSlave returns the terminal side of a new pseudo-terminal pair.
func openPTYSlave(t *testing.T) *os.File {
	_, s := testenv.OpenPTY(t)
	return s
}
