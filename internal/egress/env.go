package egress

import (
	"net/netip"
	"net/url"
	"strconv"
)

// Env returns the variables that point a child's clients at a proxy
// reached at addr, each with the credential cred (curl, Python's urllib,
// Go's net/http, pip, npm and git send a proxy URL's user and password as
// Proxy-Authorization; SOCKS5 clients as RFC 1929 username/password):
//
//   - HTTP_PROXY, HTTPS_PROXY (http://USER:PASS@ADDR) and ALL_PROXY
//     (socks5h://USER:PASS@ADDR,
//     so the proxy resolves names), each in both cases, as curl,
//     Python, Go, git and most libraries read them; NO_PROXY and no_proxy
//     empty, so an inherited list cannot send a host around the proxy
//     (where nothing but the proxy is reachable, such a host would fail);
//   - the tool-specific names some clients read instead:
//     npm_config_proxy and npm_config_https_proxy (npm), YARN_HTTP_PROXY
//     and YARN_HTTPS_PROXY (yarn 2+), PIP_PROXY (pip), BUNDLE_HTTP_PROXY
//     and BUNDLE_HTTPS_PROXY (bundler), GRPC_PROXY (gRPC core),
//     RSYNC_PROXY (rsync, user:pass@host:port without a scheme) and
//     CLOUDSDK_PROXY_TYPE, CLOUDSDK_PROXY_ADDRESS, CLOUDSDK_PROXY_PORT,
//     CLOUDSDK_PROXY_USERNAME, CLOUDSDK_PROXY_PASSWORD (gcloud).
//
// Clients that ignore the variables (Node's fetch and undici, Bun, Java's
// HttpClient) then connect directly, which the cage refuses: they reach
// nothing, never the internet.
func Env(addr netip.AddrPort, cred Credential) []string {
	hp := addr.String()
	// A random credential is hex: nothing in it needs escaping in a URL.
	ui := url.UserPassword(cred.User, cred.Password).String() + "@"
	httpURL, socksURL := "http://"+ui+hp, "socks5h://"+ui+hp
	return []string{
		"HTTP_PROXY=" + httpURL, "http_proxy=" + httpURL,
		"HTTPS_PROXY=" + httpURL, "https_proxy=" + httpURL,
		"ALL_PROXY=" + socksURL, "all_proxy=" + socksURL,
		"NO_PROXY=", "no_proxy=",
		"npm_config_proxy=" + httpURL, "npm_config_https_proxy=" + httpURL,
		"YARN_HTTP_PROXY=" + httpURL, "YARN_HTTPS_PROXY=" + httpURL,
		"PIP_PROXY=" + httpURL,
		"BUNDLE_HTTP_PROXY=" + httpURL, "BUNDLE_HTTPS_PROXY=" + httpURL,
		"GRPC_PROXY=" + httpURL,
		"RSYNC_PROXY=" + ui + hp,
		"CLOUDSDK_PROXY_TYPE=http", "CLOUDSDK_PROXY_ADDRESS=" + addr.Addr().String(), "CLOUDSDK_PROXY_PORT=" + strconv.Itoa(int(addr.Port())),
		"CLOUDSDK_PROXY_USERNAME=" + cred.User, "CLOUDSDK_PROXY_PASSWORD=" + cred.Password,
	}
}

// EnvNames returns the names [Env] sets, so a caller can drop inherited
// ones.
func EnvNames() []string {
	env := Env(netip.MustParseAddrPort("127.0.0.1:1"), Credential{User: "u", Password: "p"})
	names := make([]string, len(env))
	for i, kv := range env {
		for j := 0; j < len(kv); j++ {
			if kv[j] == '=' {
				names[i] = kv[:j]
				break
			}
		}
	}
	return names
}
