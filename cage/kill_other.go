//go:build !unix

package cage

import "errors"

// killGroup: no process groups here (and no backend spawns).
func killGroup(int) error { return errors.ErrUnsupported }
