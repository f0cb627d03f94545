package pathresolve_test

import (
	"fmt"
	"strings"
)

func fmtWrap(err error) error     { return fmt.Errorf("cage: %w", err) }
func contains(s, sub string) bool { return strings.Contains(s, sub) }
