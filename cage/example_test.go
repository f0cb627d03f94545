package cage_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/procage-go/procage/cage"
	"github.com/procage-go/procage/pathresolve/macfs"
	"github.com/procage-go/procage/profile"
)

// A simulated macOS file system makes the output the same on every OS.
func exampleFS() cage.Option {
	fsys := macfs.NewMacOS()
	return cage.WithFS(fsys, fsys.Firmlinks())
}

func ExampleNew() {
	policy, err := profile.New(profile.BaseV1, profile.ReadWrite("/tmp/build"))
	if err != nil {
		log.Fatal(err)
	}
	// The simulated file system is macOS's, so plan for macOS.
	c, err := cage.New(policy, cage.WithBackend(cage.BackendMacOS), exampleFS(), cage.WithHome(macfs.Home))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Policy())
	fmt.Println(c.Home())
	// Output:
	// {base v1; fs: read+write subpath /tmp/build; network off}
	// /Users/me
}

func ExampleCage_Plan() {
	policy, err := profile.New(profile.BaseV1, profile.ReadWrite("/tmp/build"))
	if err != nil {
		log.Fatal(err)
	}
	// The macOS plan, previewed from any OS.
	c, err := cage.New(policy, cage.WithBackend(cage.BackendMacOS), exampleFS(), cage.WithHome(macfs.Home))
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(c.Plan(), "\n") {
		if strings.Contains(line, "/private/tmp/build") || strings.HasPrefix(line, "(deny default") {
			fmt.Println(line)
		}
	}
	// Output:
	// (deny default)
	// (allow file-read* file-write* (subpath "/private/tmp/build"))
}

func ExampleCage_Rewrites() {
	policy, err := profile.New(profile.BaseV1,
		profile.Read("/tmp/build"),
		profile.Read("/System/Volumes/Data/Users/me/src"))
	if err != nil {
		log.Fatal(err)
	}
	c, err := cage.New(policy, exampleFS(), cage.WithHome(macfs.Home))
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range c.Rewrites() {
		fmt.Printf("%s -> %s (%s via %s)\n", r.From, r.To, r.Reason, r.Via)
	}
	// Output:
	// /System/Volumes/Data/Users/me/src -> /Users/me/src (firmlink via /Users)
	// /tmp/build -> /private/tmp/build (symlink via /tmp)
}

// A run that writes a tree. It has no output check, so it only compiles:
// it needs a host that cages, and on Linux a writable tree is a gap the
// caller accepts by name (see the package documentation's Linux section).
func ExampleCage_Command() {
	policy, err := profile.New(profile.BaseV1, profile.ReadWrite("/tmp/build"))
	if err != nil {
		log.Fatal(err)
	}
	c, err := cage.New(policy)
	if err != nil {
		log.Fatal(err)
	}
	cmd := c.Command(context.Background(), "sh", "-c", "echo hi > /tmp/build/out")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatal(err)
	}
}

// The Linux plan, previewed from any OS: Landlock rules with their layers,
// the seccomp rules, and a gap Linux cannot enforce, accepted by name.
func ExampleCage_LinuxPlan() {
	policy, err := profile.New(profile.BaseV1, profile.Read("/srv/data"), profile.Network(profile.NetworkLoopback, 8080))
	if err != nil {
		log.Fatal(err)
	}
	c, err := cage.New(policy, cage.WithBackend(cage.BackendLinux), cage.WithLinuxTier(cage.TierT2), cage.WithHome("/home/me"), cage.AcceptGaps(profile.GapLoopback))
	if err != nil {
		log.Fatal(err)
	}
	for _, line := range strings.Split(c.Plan(), "\n") {
		if strings.Contains(line, "/srv/data") || strings.HasPrefix(line, "tcp port") || strings.HasPrefix(line, "# Linux plan") ||
			strings.HasPrefix(line, "seccomp clone3") || strings.HasPrefix(line, "ACCEPTED") {
			fmt.Println(line)
		}
	}
	// Output:
	// # Linux plan: Landlock ABI 7 planned, at least 6 needed; tier T2 (Landlock and seccomp)
	// path policy   /srv/data: read_file|read_dir
	// tcp port 8080: bind_tcp|connect_tcp
	// seccomp clone3 -> ENOSYS  # BPF cannot read clone3's flags struct; ENOSYS makes libc fall back to clone (multikernel/sandlock#240)
	// ACCEPTED GAP (not enforced) network-loopback: Landlock filters TCP by port, not address: any host is reachable on an allowed port, and listen() without bind() listens on an unlisted ephemeral port on every interface (landlock-lsm/linux#15)
}
