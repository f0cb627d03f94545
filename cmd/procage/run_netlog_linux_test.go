package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/procage-go/procage/internal/testenv"
)

// TestRunNetLog: a caged curl reaches an address the policy allows through
// the run's proxy, and --net-log prints the request.
func TestRunNetLog(t *testing.T) {
	testenv.RequireProgram(t, "/usr/bin/curl")
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	url := fmt.Sprintf("http://127.0.0.2:%d/x", port)
	code, out, errOut := runCLI(t, "run", "--allow-address", "127.0.0.2", "--accept-gap", "network-proxy-direct", "--net-log", "--", "/usr/bin/curl", "-sS", "--max-time", "10", url)
	if strings.Contains(errOut, "procage-skip") || strings.Contains(errOut, "Landlock ABI") {
		t.Skipf("procage-skip(landlock-abi): %s", errOut)
	}
	if code != 0 || out != "hello" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	want := fmt.Sprintf("procage run: net: allowed GET 127.0.0.2:%d by 127.0.0.2 -> 127.0.0.2:%d sent 0 received 5\n", port, port)
	if errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	// Not through the proxy: refused.
	code, _, errOut = runCLI(t, "run", "--allow-address", "127.0.0.2", "--accept-gap", "network-proxy-direct", "--net-log", "--", "/usr/bin/curl", "-sS", "--max-time", "10", "--noproxy", "*", url)
	if code != 7 || !strings.Contains(errOut, "Failed to connect") || strings.Contains(errOut, "net:") {
		t.Errorf("direct: exit %d, stderr %q", code, errOut)
	}
}
