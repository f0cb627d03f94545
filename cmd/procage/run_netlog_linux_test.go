package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/procage-go/procage/internal/testenv"
)

// TestRunNetLog: a caged curl reaches an address the policy allows through
// the run's proxy, and --net-log prints the request.
func TestRunNetLog(t *testing.T) {
	testenv.RequireProgram(t, "/usr/bin/curl")
	port := testenv.ServeHTTP(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	url := fmt.Sprintf("http://127.0.0.2:%d/x", port)
	code, out, errOut := runCLI(t, "run", "--allow-address", "127.0.0.2", "--accept-gap", "network-proxy-direct", "--net-log", "--", "/usr/bin/curl", "-sS", "--max-time", "10", url)
	if strings.Contains(errOut, "procage-skip") || strings.Contains(errOut, "Landlock ABI") {
		t.Skipf("procage-skip(landlock-abi): %s", errOut)
	}
	if code != 0 || out != "hello" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// sent: curl's request line and headers (their size is curl's).
	want := regexp.MustCompile(fmt.Sprintf(`^procage run: net: allowed GET 127\.0\.0\.2:%d by 127\.0\.0\.2 -> 127\.0\.0\.2:%d sent [1-9][0-9]* received 5\n$`, port, port))
	if !want.MatchString(errOut) {
		t.Errorf("stderr %q, want %s", errOut, want)
	}
	// Not through the proxy: refused.
	code, _, errOut = runCLI(t, "run", "--allow-address", "127.0.0.2", "--accept-gap", "network-proxy-direct", "--net-log", "--", "/usr/bin/curl", "-sS", "--max-time", "10", "--noproxy", "*", url)
	if code != 7 || !strings.Contains(errOut, "Failed to connect") || strings.Contains(errOut, "net:") {
		t.Errorf("direct: exit %d, stderr %q", code, errOut)
	}
}

// TestRunNetLogJSON: --net-log --json prints the record as one line of
// JSON on stderr, the fields docs/policy.md names, for an allowed and a
// denied request of one run; --json alone is a usage error.
func TestRunNetLogJSON(t *testing.T) {
	testenv.RequireProgram(t, "/usr/bin/curl")
	port := testenv.ServeHTTP(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	script := fmt.Sprintf("/usr/bin/curl -sS --max-time 10 http://127.0.0.2:%[1]d/x; /usr/bin/curl -sS --max-time 10 http://127.0.0.3:%[1]d/y", port)
	code, out, errOut := runCLI(t, "run", "--allow-address", "127.0.0.2", "--accept-gap", "network-proxy-direct", "--fork", "--net-log", "--json", "--", "/bin/sh", "-c", script)
	if strings.Contains(errOut, "Landlock ABI") {
		t.Skipf("procage-skip(landlock-abi): %s", errOut)
	}
	if code != 0 || !strings.HasPrefix(out, "hello") || !strings.Contains(out, "127.0.0.3:"+fmt.Sprint(port)+" refused") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, `{"net_log":[`) {
		t.Fatalf("stderr is not one line of JSON: %q", errOut)
	}
	var rec struct {
		NetLog []map[string]any `json:"net_log"`
	}
	if err := json.Unmarshal([]byte(errOut), &rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.NetLog) != 2 {
		t.Fatalf("records: %v", rec.NetLog)
	}
	a, d := rec.NetLog[0], rec.NetLog[1]
	if a["proto"] != "http" || a["method"] != "GET" || a["host"] != "127.0.0.2" || a["port"] != float64(port) || a["verdict"] != "allowed" ||
		a["rule"] != "127.0.0.2" || a["addr"] != fmt.Sprintf("127.0.0.2:%d", port) || a["received"] != float64(5) || a["status"] != float64(200) {
		t.Errorf("allowed record: %v", a)
	}
	if d["host"] != "127.0.0.3" || d["verdict"] != "denied-no-rule" || d["status"] != float64(403) || d["addr"] != nil || d["reason"] == "" {
		t.Errorf("denied record: %v", d)
	}
	for _, k := range []string{"start", "duration_ms", "sent"} {
		if _, ok := a[k]; !ok {
			t.Errorf("no %q: %v", k, a)
		}
	}
	code, _, errOut = runCLI(t, "run", "--allow-address", "127.0.0.2", "--json", "--", "/bin/true")
	if code != 125 || !strings.Contains(errOut, "--json prints the --net-log record: add --net-log") {
		t.Errorf("--json without --net-log: exit %d, %q", code, errOut)
	}
}
