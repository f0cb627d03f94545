package sbpl

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 64

// ParseError reports where SBPL text could not be read.
type ParseError struct {
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("sbpl: line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// Parse reads a whole profile: an optional (version N) form followed by
// allow and deny rules. Comments before a rule become its Comment, and
// ";;" lines set the Layer of the rules after them, so Parse reads back what
// [Profile.Text] writes. (debug ...) forms are accepted and dropped: they
// only turn on logging (Apple's SBPL prelude defines debug as a macro that
// expands to nothing, 0xbf00/simbple src/scm/sbpl_v1.scm), and Homebrew's
// and Bazel's profiles start with (debug deny). Other top-level forms
// (define, import, if) are outside the model and are errors.
func Parse(src string) (*Profile, error) {
	prof, _, err := parse(src, true)
	return prof, err
}

// ParseLines is [Parse], also returning the line each rule starts on
// (1-based), so a rule can be named by its place in the source.
func ParseLines(src string) (*Profile, []int, error) { return parse(src, true) }

// ParseRules reads allow and deny rules only (no version or debug form),
// as used for Seatbelt-layer rules supplied by a caller.
func ParseRules(src string) ([]Rule, error) {
	prof, _, err := parse(src, false)
	if err != nil {
		return nil, err
	}
	return prof.Rules, nil
}

func parse(src string, versionOK bool) (*Profile, []int, error) {
	p := &parser{src: src, line: 1, col: 1}
	prof := &Profile{Version: 1}
	var lines []int
	sawVersion := false
	for {
		p.skipSpace()
		if p.eof() {
			break
		}
		line, col := p.line, p.col
		x, err := p.expr(0)
		if err != nil {
			return nil, nil, err
		}
		l, ok := x.(list)
		if !ok || len(l.items) == 0 {
			return nil, nil, &ParseError{line, col, "expected an (allow ...) or (deny ...) form"}
		}
		head, _ := l.items[0].(Sym)
		switch head {
		case "version":
			if !versionOK {
				return nil, nil, &ParseError{line, col, "a rule list cannot contain (version ...)"}
			}
			if sawVersion || len(prof.Rules) > 0 {
				return nil, nil, &ParseError{line, col, "(version ...) must come first, once"}
			}
			n, ok := Int(0), len(l.items) == 2
			if ok {
				n, ok = l.items[1].(Int)
			}
			if !ok {
				return nil, nil, &ParseError{line, col, "(version N) takes one integer"}
			}
			prof.Version = int(n)
			sawVersion = true
		case "debug":
			if !versionOK {
				return nil, nil, &ParseError{line, col, "a rule list cannot contain (debug ...)"}
			}
		case "allow", "deny":
			r, err := toRule(l)
			if err != nil {
				return nil, nil, &ParseError{line, col, err.Error()}
			}
			r.Comment = p.takeComment()
			r.Layer = p.layer
			prof.Rules = append(prof.Rules, r)
			lines = append(lines, line)
		default:
			return nil, nil, &ParseError{line, col, fmt.Sprintf("unsupported top-level form %q: only version, debug, allow and deny are accepted", formName(l))}
		}
		p.comment = nil
	}
	return prof, lines, nil
}

func formName(l list) string {
	if len(l.items) == 0 {
		return "()"
	}
	if s, ok := l.items[0].(Sym); ok {
		return string(s)
	}
	return "?"
}

// list is a parsed parenthesised form.
type list struct{ items []any }

func toRule(l list) (Rule, error) {
	r := Rule{Effect: Deny}
	if l.items[0].(Sym) == "allow" {
		r.Effect = Allow
	}
	for _, it := range l.items[1:] {
		switch v := it.(type) {
		case Sym:
			if len(r.Filters) > 0 {
				return Rule{}, fmt.Errorf("operation %q after a filter", string(v))
			}
			r.Ops = append(r.Ops, string(v))
		case list:
			name := formName(v)
			if name == "with" {
				if len(v.items) < 2 {
					return Rule{}, fmt.Errorf("empty (with) modifier")
				}
				if _, ok := v.items[1].(Sym); !ok {
					return Rule{}, fmt.Errorf("(with ...) takes a modifier name")
				}
				m, err := toForm(list{v.items[1:]}, 1)
				if err != nil {
					return Rule{}, err
				}
				r.Modifiers = append(r.Modifiers, Modifier{Name: m.Name, Args: m.Args})
				continue
			}
			f, err := toForm(v, 1)
			if err != nil {
				return Rule{}, err
			}
			r.Filters = append(r.Filters, f)
		default:
			return Rule{}, fmt.Errorf("unexpected %s in a rule; operations are symbols and filters are forms", describe(it))
		}
	}
	if len(r.Ops) == 0 {
		return Rule{}, fmt.Errorf("%s rule names no operation", r.Effect)
	}
	return r, nil
}

func toForm(l list, depth int) (*Filter, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("forms nested deeper than %d", maxDepth)
	}
	if len(l.items) == 0 {
		return nil, fmt.Errorf("empty form ()")
	}
	name, ok := l.items[0].(Sym)
	if !ok {
		return nil, fmt.Errorf("a form must start with a name, not %s", describe(l.items[0]))
	}
	f := &Filter{Name: string(name)}
	for _, it := range l.items[1:] {
		switch v := it.(type) {
		case Str, Sym, Int:
			f.Args = append(f.Args, v.(Value))
		case list:
			sub, err := toForm(v, depth+1)
			if err != nil {
				return nil, err
			}
			f.Args = append(f.Args, sub)
		}
	}
	return f, nil
}

func describe(x any) string {
	switch v := x.(type) {
	case Str:
		return fmt.Sprintf("string %q", string(v))
	case Int:
		return fmt.Sprintf("number %d", int64(v))
	case Sym:
		return fmt.Sprintf("symbol %s", string(v))
	}
	return "form"
}

type parser struct {
	src       string
	pos       int
	line, col int
	comment   []string // "; " lines since the last form
	layer     string   // the last ";; " heading
}

func (p *parser) eof() bool { return p.pos >= len(p.src) }

func (p *parser) next() byte {
	c := p.src[p.pos]
	p.pos++
	if c == '\n' {
		p.line++
		p.col = 1
	} else {
		p.col++
	}
	return c
}

func (p *parser) errf(format string, args ...any) error {
	return &ParseError{p.line, p.col, fmt.Sprintf(format, args...)}
}

func (p *parser) takeComment() string {
	s := strings.TrimSpace(strings.Join(p.comment, " "))
	p.comment = nil
	return s
}

// skipSpace skips white space and comments, recording comment text.
func (p *parser) skipSpace() {
	for !p.eof() {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			p.next()
		case c == ';':
			start := p.pos
			for !p.eof() && p.src[p.pos] != '\n' {
				p.next()
			}
			text := p.src[start:p.pos]
			if strings.HasPrefix(text, ";;") {
				p.layer = strings.TrimSpace(strings.TrimLeft(text, ";"))
				p.comment = nil
			} else {
				p.comment = append(p.comment, strings.TrimSpace(strings.TrimPrefix(text, ";")))
			}
		default:
			return
		}
	}
}

func (p *parser) expr(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("forms nested deeper than %d", maxDepth)
	}
	p.skipSpace()
	if p.eof() {
		return nil, p.errf("unexpected end of input")
	}
	switch c := p.src[p.pos]; {
	case c == '(':
		p.next()
		var l list
		for {
			p.skipSpace()
			if p.eof() {
				return nil, p.errf("unclosed (")
			}
			if p.src[p.pos] == ')' {
				p.next()
				return l, nil
			}
			x, err := p.expr(depth + 1)
			if err != nil {
				return nil, err
			}
			l.items = append(l.items, x)
		}
	case c == ')':
		return nil, p.errf("unexpected )")
	case c == '"':
		p.next()
		return p.str(false)
	case c == '#' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '"':
		p.next()
		p.next()
		return p.str(true)
	case c == '\'' || c == '`' || c == ',':
		return nil, p.errf("quote and quasiquote are not supported")
	default:
		return p.atom()
	}
}

// str reads the rest of a string literal. TinyScheme escapes: \\ \" \n \t
// \r. A raw string (#"...") takes backslashes literally.
func (p *parser) str(raw bool) (any, error) {
	var b strings.Builder
	for {
		if p.eof() {
			return nil, p.errf("unterminated string")
		}
		c := p.next()
		switch {
		case c == '"':
			s := b.String()
			if strings.IndexByte(s, 0) >= 0 {
				return nil, p.errf("string contains a NUL byte")
			}
			if !utf8.ValidString(s) {
				return nil, p.errf("string is not valid UTF-8")
			}
			return Str(s), nil
		case c == '\\' && !raw:
			if p.eof() {
				return nil, p.errf("unterminated string")
			}
			switch e := p.next(); e {
			case '\\', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				return nil, p.errf("unsupported escape \\%c in string", e)
			}
		default:
			b.WriteByte(c)
		}
	}
}

func (p *parser) atom() (any, error) {
	start := p.pos
	for !p.eof() && !isDelimiter(p.src[p.pos]) {
		p.next()
	}
	tok := p.src[start:p.pos]
	switch {
	case strings.HasPrefix(tok, "#o") || strings.HasPrefix(tok, "#x") || strings.HasPrefix(tok, "#d") || strings.HasPrefix(tok, "#b"):
		base := map[byte]int{'o': 8, 'x': 16, 'd': 10, 'b': 2}[tok[1]]
		n, err := strconv.ParseInt(tok[2:], base, 64)
		if err != nil {
			return nil, p.errf("bad number %q", tok)
		}
		return Int(n), nil
	case looksNumeric(tok):
		n, err := strconv.ParseInt(tok, 10, 64)
		if err != nil {
			return nil, p.errf("bad number %q", tok)
		}
		return Int(n), nil
	case strings.HasPrefix(tok, "#"):
		return nil, p.errf("unsupported token %q", tok)
	}
	if !isSymbol(tok) {
		return nil, p.errf("bad symbol %q", tok)
	}
	return Sym(tok), nil
}
