package egress

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Credential is a run's proxy credential: the proxy listens on a port of
// 127.0.0.1 that any local process can connect to, so it serves only
// clients that present the run's user and password (HTTP Basic in
// Proxy-Authorization, RFC 9110 11.7.1 and RFC 7617; SOCKS5
// username/password, RFC 1929). [Env] puts it in the proxy URLs, so the
// run's processes (which can read their environment) have it and other
// local processes do not.
type Credential struct {
	User, Password string
}

// NewCredential returns a random credential (crypto/rand).
func NewCredential() (Credential, error) {
	var b [24]byte
	if _, err := io.ReadFull(rand.Reader, b[:]); err != nil {
		return Credential{}, fmt.Errorf("egress: a proxy credential: %w", err)
	}
	return Credential{User: "procage-" + hex.EncodeToString(b[:4]), Password: hex.EncodeToString(b[4:])}, nil
}

// match reports whether user and password are c's, in time independent of
// where they differ.
func (c Credential) match(user, password string) bool {
	u := subtle.ConstantTimeCompare([]byte(user), []byte(c.User))
	p := subtle.ConstantTimeCompare([]byte(password), []byte(c.Password))
	return u&p == 1 && c.User != ""
}

// proxyAuthorized reports whether r carries c in Proxy-Authorization
// (Basic).
func (c Credential) proxyAuthorized(r *http.Request) bool {
	h := r.Header.Get("Proxy-Authorization")
	scheme, enc, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return false
	}
	dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return false
	}
	user, password, ok := strings.Cut(string(dec), ":")
	return ok && c.match(user, password)
}

// authText is the reason a request without the run's credential is
// refused with.
const authText = "the proxy credential is missing or wrong: the run's proxy serves the run's processes, which find it in the proxy URLs of their environment (HTTP_PROXY, ALL_PROXY)"
