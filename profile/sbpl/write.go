package sbpl

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/procage-go/procage/internal/plantext"
)

// Text returns the profile as SBPL source. The output is deterministic:
// the same Profile always gives the same bytes. It fails only when a string
// cannot be quoted (see [Quote]). A comment or layer name is written on one
// line as it is when it is printable text, and otherwise as a Go string
// literal (strconv.Quote), so no comment can end its line and start a
// form: [Parse] reads both back.
func (p *Profile) Text() (string, error) {
	var b strings.Builder
	b.Grow(96 * (len(p.Rules) + 1))
	if err := p.write(&b); err != nil {
		return "", err
	}
	return b.String(), nil
}

// WriteTo writes the profile's text to w.
func (p *Profile) WriteTo(w io.Writer) (int64, error) {
	s, err := p.Text()
	if err != nil {
		return 0, err
	}
	n, err := io.WriteString(w, s)
	return int64(n), err
}

func (p *Profile) write(b *strings.Builder) error {
	fmt.Fprintf(b, "(version %d)\n", p.Version)
	layer := ""
	for i := range p.Rules {
		r := &p.Rules[i]
		if r.Layer != layer {
			layer = r.Layer
			b.WriteString("\n;; ")
			b.WriteString(plantext.Text(layer))
			b.WriteByte('\n')
		}
		if r.Comment != "" {
			b.WriteString("; ")
			b.WriteString(plantext.Text(r.Comment))
			b.WriteByte('\n')
		}
		if err := r.write(b); err != nil {
			return fmt.Errorf("rule %d: %w", i+1, err)
		}
		b.WriteByte('\n')
	}
	return nil
}

// Text returns the rule as one SBPL form, without its comment.
func (r *Rule) Text() (string, error) {
	var b strings.Builder
	if err := r.write(&b); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (r *Rule) write(b *strings.Builder) error {
	if len(r.Ops) == 0 {
		return fmt.Errorf("sbpl: %s rule names no operation", r.Effect)
	}
	b.WriteByte('(')
	b.WriteString(r.Effect.String())
	for _, op := range r.Ops {
		if !isSymbol(op) {
			return fmt.Errorf("sbpl: operation %q is not a symbol", op)
		}
		b.WriteByte(' ')
		b.WriteString(op)
	}
	for _, f := range r.Filters {
		b.WriteByte(' ')
		if err := writeForm(b, f.Name, f.Args); err != nil {
			return err
		}
	}
	for _, m := range r.Modifiers {
		b.WriteByte(' ')
		if err := writeForm(b, "with", append([]Value{Sym(m.Name)}, m.Args...)); err != nil {
			return err
		}
	}
	b.WriteByte(')')
	return nil
}

// String returns the filter as SBPL source, or a description of why it
// cannot be written.
func (f *Filter) String() string {
	var b strings.Builder
	if err := writeForm(&b, f.Name, f.Args); err != nil {
		return "<invalid: " + err.Error() + ">"
	}
	return b.String()
}

func writeForm(b *strings.Builder, name string, args []Value) error {
	if !isSymbol(name) {
		return fmt.Errorf("sbpl: form name %q is not a symbol", name)
	}
	b.WriteByte('(')
	b.WriteString(name)
	for _, a := range args {
		b.WriteByte(' ')
		if err := writeValue(b, a); err != nil {
			return err
		}
	}
	b.WriteByte(')')
	return nil
}

func writeValue(b *strings.Builder, v Value) error {
	switch v := v.(type) {
	case Str:
		q, err := Quote(string(v))
		if err != nil {
			return err
		}
		b.WriteString(q)
	case Sym:
		if !isSymbol(string(v)) {
			return fmt.Errorf("sbpl: %q is not a symbol", string(v))
		}
		b.WriteString(string(v))
	case Int:
		b.WriteString(strconv.FormatInt(int64(v), 10))
	case *Filter:
		if v == nil {
			return fmt.Errorf("sbpl: nil nested form")
		}
		return writeForm(b, v.Name, v.Args)
	default:
		return fmt.Errorf("sbpl: unsupported value %T", v)
	}
	return nil
}

// isSymbol reports whether s can be written as a bare symbol that the
// reader reads back as the same symbol (and not as a number).
func isSymbol(s string) bool {
	if s == "" || s[0] == '#' || looksNumeric(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if isDelimiter(s[i]) || s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func isDelimiter(c byte) bool {
	return c == '(' || c == ')' || c == '"' || c == ';' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\'' || c == '`' || c == ','
}

func looksNumeric(s string) bool {
	t := strings.TrimLeft(s, "+-")
	return t != "" && t[0] >= '0' && t[0] <= '9'
}
