package egress

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// BenchmarkProxy fetches the same response directly and through the proxy
// in each iteration, so both see the same machine load, and reports:
//
//   - throughput-ratio: proxied bytes per second over direct (1 is no
//     cost; the figure that matters for 1 MiB);
//   - latency-ratio: proxied time per request over direct (the figure
//     that matters for 1 KiB), and added-µs/req, the difference.
//
// Both clients keep their connections alive; the proxy keeps its upstream
// ones (HTTP) or holds one tunnel (SOCKS5).
func BenchmarkProxy(b *testing.B) {
	s := upstream(b, lo2, "A", false)
	f := startProxy(b, []string{"allowed.test"}, nil, nil, defaultNames())
	for _, mode := range []string{"http", "socks5h"} {
		for _, size := range []int{1 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("%s/%dKiB", mode, size>>10), func(b *testing.B) {
				u, _ := url.Parse(proxyURL(f.p, "http"))
				if mode == "socks5h" {
					u.Scheme = "socks5h"
				}
				proxied := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
				direct := &http.Client{Transport: &http.Transport{}}
				defer proxied.CloseIdleConnections()
				defer direct.CloseIdleConnections()
				path := fmt.Sprintf("/size/%d", size)
				directURL := fmt.Sprintf("http://127.0.0.2:%d%s", port(b, s), path)
				proxiedURL := fmt.Sprintf("http://allowed.test:%d%s", port(b, s), path)
				fetch := func(c *http.Client, u string) time.Duration {
					start := time.Now()
					resp, err := c.Get(u)
					if err != nil {
						b.Fatal(err)
					}
					n, err := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil || n != int64(size) {
						b.Fatalf("%s: %d bytes, %v", u, n, err)
					}
					return time.Since(start)
				}
				fetch(direct, directURL) // warm both connections
				fetch(proxied, proxiedURL)
				var dt, pt time.Duration
				b.SetBytes(int64(2 * size))
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					// Alternate the order, so neither always runs on a
					// warmer cache.
					if i%2 == 0 {
						dt += fetch(direct, directURL)
						pt += fetch(proxied, proxiedURL)
					} else {
						pt += fetch(proxied, proxiedURL)
						dt += fetch(direct, directURL)
					}
				}
				n := float64(b.N)
				b.ReportMetric(float64(dt)/float64(pt), "throughput-ratio")
				b.ReportMetric(float64(pt)/float64(dt), "latency-ratio")
				b.ReportMetric(float64(pt-dt)/n/1e3, "added-µs/req")
			})
		}
	}
}
