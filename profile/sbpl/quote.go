package sbpl

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/procage-go/procage/internal/plantext"
)

// Errors returned by [Quote] for strings that cannot be put into SBPL.
var (
	ErrNUL         = errors.New("contains a NUL byte")
	ErrInvalidUTF8 = errors.New("is not valid UTF-8")
	ErrControl     = errors.New("contains a control character, line separator or bidirectional control")
)

// QuoteError reports a string that cannot be written as an SBPL string.
type QuoteError struct {
	Value string
	Err   error // ErrNUL, ErrInvalidUTF8 or ErrControl
}

func (e *QuoteError) Error() string { return fmt.Sprintf("sbpl: string %q %v", e.Value, e.Err) }
func (e *QuoteError) Unwrap() error { return e.Err }

// Quote returns s as an SBPL (TinyScheme) string literal. It is the only
// place that turns text into SBPL: every path, name and regex the writer
// emits passes through it. Backslash and double quote are escaped; every
// other character is kept as is, which TinyScheme's string reader accepts
// literally. NUL cannot be represented (libsandbox takes C strings) and
// invalid UTF-8 is refused rather than guessed at. A control character
// (C0, DEL or C1: a line break, tab, carriage return or escape), a line or
// paragraph separator and a bidirectional control are refused too
// ([ErrControl]): kept as is they would make the printed profile show what
// it is not (a line break then a form that is only the string's rest, an
// escape sequence a terminal obeys, text reordered on screen), and
// TinyScheme's \x and \n escapes are not confirmed for libsandbox's
// reader, where a misread deny would match another path.
func Quote(s string) (string, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return "", &QuoteError{Value: s, Err: ErrNUL}
	}
	if !utf8.ValidString(s) {
		return "", &QuoteError{Value: s, Err: ErrInvalidUTF8}
	}
	if strings.ContainsFunc(s, plantext.Unsafe) {
		return "", &QuoteError{Value: s, Err: ErrControl}
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// CheckString reports whether s can be quoted, without quoting it.
func CheckString(s string) error {
	_, err := Quote(s)
	return err
}
