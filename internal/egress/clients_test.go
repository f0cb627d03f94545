package egress

import (
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/procage-go/procage/internal/egress/hostrule"
)

// lookPath finds a client program or skips: the Go client test runs the
// same cases everywhere.
func lookPath(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("procage-skip(no-program): %s not installed: %v", name, err)
	}
	return p
}

// clientEnv is a child's environment: the proxy's variables and nothing
// inherited that could route around them.
func clientEnv(f *fixture) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "LC_ALL=C"}, f.p.Env()...)
}

func TestCurl(t *testing.T) {
	curl := lookPath(t, "curl")
	a := upstream(t, lo2, "A", false)
	tlsA := upstream(t, lo2, "TLS", true)
	f := startProxy(t, []string{"allowed.test", "example.com", "local.test"}, []string{"denied.test"}, nil, defaultNames())
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsA.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		t.Helper()
		cmd := exec.Command(curl, append([]string{"-sS", "--max-time", "20", "-w", "\n%{http_code}"}, args...)...)
		cmd.Env = clientEnv(f)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("curl %v: %v", args, err)
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	pa, pt := port(t, a), port(t, tlsA)
	// http_proxy from the environment.
	if out, code := run(fmt.Sprintf("http://allowed.test:%d/curl", pa)); code != 0 || out != "A GET /curl body=0\n200" {
		t.Errorf("allowed: exit %d %q", code, out)
	}
	// https_proxy: CONNECT, TLS to the name.
	if out, code := run("--cacert", ca, fmt.Sprintf("https://example.com:%d/tls", pt)); code != 0 || out != "TLS GET /tls body=0\n200" {
		t.Errorf("CONNECT: exit %d %q", code, out)
	}
	// ALL_PROXY's socks5h: the proxy resolves the name.
	if out, code := run("--proxy", proxyURL(f.p, "socks5h"), fmt.Sprintf("http://allowed.test:%d/socks", pa)); code != 0 || out != "A GET /socks body=0\n200" {
		t.Errorf("socks5h: exit %d %q", code, out)
	}
	if out, _ := run(fmt.Sprintf("http://denied.test:%d/", pa)); !strings.Contains(out, "denied.test") || !strings.HasSuffix(out, "\n403") {
		t.Errorf("denied: %q", out)
	}
	if out, _ := run(fmt.Sprintf("http://other.test:%d/", pa)); !strings.Contains(out, "--allow-host other.test") || !strings.HasSuffix(out, "\n403") {
		t.Errorf("unlisted: %q", out)
	}
	if out, _ := run(fmt.Sprintf("http://local.test:%d/", pa)); !strings.Contains(out, "resolves to 127.0.0.1") || !strings.HasSuffix(out, "\n403") {
		t.Errorf("local.test: %q", out)
	}
	if out, code := run("--proxy", proxyURL(f.p, "socks5h"), fmt.Sprintf("http://denied.test:%d/", pa)); code == 0 {
		t.Errorf("socks5h denied: exit 0 %q", out)
	}
	if out, code := run("--cacert", ca, fmt.Sprintf("https://denied.test:%d/", pt)); code == 0 || !strings.Contains(out, "403") {
		t.Errorf("CONNECT denied: exit %d %q", code, out)
	}
	f.p.Stop()
	var got []string
	for _, r := range f.p.Records() {
		got = append(got, fmt.Sprintf("%s %s %s %s", r.Proto, r.Method, r.Host, r.Verdict))
	}
	want := []string{
		"http GET allowed.test allowed",
		"connect CONNECT example.com allowed",
		"socks5 CONNECT allowed.test allowed",
		"http GET denied.test denied-by-rule",
		"http GET other.test denied-no-rule",
		"http GET local.test denied-address",
		"socks5 CONNECT denied.test denied-by-rule",
		"connect CONNECT denied.test denied-by-rule",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

const pyClient = `
import sys, urllib.request, urllib.error
for url in sys.argv[1:]:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            print(r.status, r.read().decode())
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode().strip())
`

func TestPythonURLLib(t *testing.T) {
	py := lookPath(t, "python3")
	a := upstream(t, lo2, "A", false)
	f := startProxy(t, []string{"allowed.test", "local.test"}, []string{"denied.test"}, nil, defaultNames())
	pa := port(t, a)
	cmd := exec.Command(py, "-I", "-c", pyClient,
		fmt.Sprintf("http://allowed.test:%d/py", pa),
		fmt.Sprintf("http://denied.test:%d/", pa),
		fmt.Sprintf("http://other.test:%d/", pa),
		fmt.Sprintf("http://local.test:%d/", pa))
	cmd.Env = clientEnv(f)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{"200 A GET /py body=0", "403 ", "403 ", "403 "}
	hints := []string{"", "denied by rule denied.test", "--allow-host other.test", "resolves to 127.0.0.1 (loopback)"}
	if len(lines) != len(want) {
		t.Fatalf("python3 printed:\n%s", out)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, want[i]) || !strings.Contains(l, hints[i]) {
			t.Errorf("line %d: %q, want %q...%q", i, l, want[i], hints[i])
		}
	}
	f.p.Stop()
	recs := f.p.Records()
	if len(recs) != 4 || !recs[0].Allowed() || recs[0].Received != int64(len("A GET /py body=0")) || recs[1].Verdict != hostrule.DeniedByRule || recs[2].Verdict != hostrule.DeniedNoRule || recs[3].Verdict != hostrule.DeniedAddress {
		t.Errorf("records: %v", recs)
	}
}
