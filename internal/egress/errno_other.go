//go:build !unix

package egress

import "errors"

var errConnRefused = errors.New("connection refused")
