package sbpl

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/procage-go/procage/internal/plantext"
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
// ";;" lines set the Layer of the rules after them (a line holding one Go
// string literal, as [Profile.Text] quotes a comment that would not read
// back as it is, is unquoted), so Parse reads back what [Profile.Text]
// writes. (debug ...) forms are accepted and dropped: they
// only turn on logging (Apple's SBPL prelude defines debug as a macro that
// expands to nothing, 0xbf00/simbple src/scm/sbpl_v1.scm), and Homebrew's
// and Bazel's profiles start with (debug deny). Other top-level forms
// (define, import, if) are outside the model and are errors.
func Parse(src string) (*Profile, error) {
	prof, _, err := parse(src, modeProfile, nil)
	return prof, err
}

// ParseLines is [Parse], also returning the line each rule starts on
// (1-based), so a rule can be named by its place in the source.
func ParseLines(src string) (*Profile, []int, error) { return parse(src, modeProfile, nil) }

// ReadProfile is [ParseLines] for profiles written by hand, which also use
// a little of SBPL's Scheme: (define NAME VALUE) with a string, number or
// (param "K") value, whose NAME later filters use in place of a string (as
// Nix's sandbox-defaults.sb writes (subpath TMPDIR)); and (if COND THEN
// [ELSE]), (when COND FORM...), (unless COND FORM...) and (begin FORM...),
// where COND is (param "K"), true when params binds K, or (not COND).
// Anything else (import, lambdas, other conditions) is an error: the
// profile must be flattened first.
func ReadProfile(src string, params map[string]string) (*Profile, []int, error) {
	return parse(src, modeScheme, params)
}

// ParseRules reads allow and deny rules only (no version or debug form),
// as used for Seatbelt-layer rules supplied by a caller.
func ParseRules(src string) ([]Rule, error) {
	prof, _, err := parse(src, modeRules, nil)
	if err != nil {
		return nil, err
	}
	return prof.Rules, nil
}

// parseMode is what a parse accepts besides allow and deny rules.
type parseMode int

const (
	modeRules   parseMode = iota // nothing else
	modeProfile                  // version and debug
	modeScheme                   // and define, if, when, unless, begin
)

// reader is one parse's state above the token level.
type reader struct {
	p          *parser
	mode       parseMode
	params     map[string]string
	defs       map[Sym]Value
	prof       *Profile
	lines      []int
	sawVersion bool
}

func parse(src string, mode parseMode, params map[string]string) (*Profile, []int, error) {
	r := &reader{p: &parser{src: src, line: 1, col: 1}, mode: mode, params: params, prof: &Profile{Version: 1}}
	for {
		r.p.skipSpace()
		if r.p.eof() {
			break
		}
		line, col := r.p.line, r.p.col
		x, err := r.p.expr(0)
		if err != nil {
			return nil, nil, err
		}
		l, ok := x.(list)
		if !ok || len(l.items) == 0 {
			return nil, nil, &ParseError{line, col, "expected an (allow ...) or (deny ...) form"}
		}
		if err := r.form(l, true, 0); err != nil {
			return nil, nil, err
		}
		r.p.comment = nil
	}
	return r.prof, r.lines, nil
}

// form handles one form at the top level or inside if, when, unless or
// begin.
func (r *reader) form(l list, top bool, depth int) error {
	line, col := l.line, l.col
	if depth > maxDepth {
		return &ParseError{line, col, fmt.Sprintf("forms nested deeper than %d", maxDepth)}
	}
	head, _ := l.items[0].(Sym)
	scheme := r.mode == modeScheme
	switch {
	case head == "version" && top:
		if r.mode == modeRules {
			return &ParseError{line, col, "a rule list cannot contain (version ...)"}
		}
		if r.sawVersion || len(r.prof.Rules) > 0 {
			return &ParseError{line, col, "(version ...) must come first, once"}
		}
		n, ok := Int(0), len(l.items) == 2
		if ok {
			n, ok = l.items[1].(Int)
		}
		if !ok {
			return &ParseError{line, col, "(version N) takes one integer"}
		}
		r.prof.Version = int(n)
		r.sawVersion = true
	case head == "debug":
		if r.mode == modeRules {
			return &ParseError{line, col, "a rule list cannot contain (debug ...)"}
		}
	case head == "allow" || head == "deny":
		rule, err := toRule(l)
		if err == nil && len(r.defs) > 0 {
			for _, f := range rule.Filters {
				r.substitute(f, 0)
			}
		}
		if err != nil {
			return &ParseError{line, col, err.Error()}
		}
		if top {
			rule.Comment = r.p.takeComment()
		}
		rule.Layer = r.p.layer
		r.prof.Rules = append(r.prof.Rules, rule)
		r.lines = append(r.lines, line)
	case scheme && head == "define":
		name, ok := Sym(""), len(l.items) == 3
		if ok {
			name, ok = l.items[1].(Sym)
		}
		var v Value
		if ok {
			switch x := l.items[2].(type) {
			case Str:
				v = x
			case Int:
				v = x
			case list:
				f, err := toForm(x, depth+1)
				if err != nil || f.Name != "param" {
					ok = false
				} else {
					v = f
				}
			default:
				ok = false
			}
		}
		if !ok {
			return &ParseError{line, col, "unsupported (define ...): only (define NAME string-number-or-(param \"K\"))"}
		}
		if r.defs == nil {
			r.defs = map[Sym]Value{}
		}
		r.defs[name] = v
	case scheme && (head == "if" || head == "when" || head == "unless"):
		if len(l.items) < 3 || (head == "if" && len(l.items) > 4) {
			return &ParseError{line, col, fmt.Sprintf("(%s COND ...) is malformed", head)}
		}
		cond, err := r.cond(l.items[1])
		if err != nil {
			return &ParseError{line, col, err.Error()}
		}
		var body []any
		switch {
		case head == "if" && cond:
			body = l.items[2:3]
		case head == "if" && len(l.items) == 4:
			body = l.items[3:4]
		case head != "if" && (head == "when") == cond:
			body = l.items[2:]
		}
		return r.forms(body, depth)
	case scheme && head == "begin":
		return r.forms(l.items[1:], depth)
	default:
		accepted := "version, debug, allow and deny"
		switch r.mode {
		case modeRules:
			accepted = "allow and deny"
		case modeScheme:
			accepted = "version, debug, define, if, when, unless, begin, allow and deny"
		}
		where := "form"
		if top {
			where = "top-level form"
		}
		return &ParseError{line, col, fmt.Sprintf("unsupported %s %q: only %s are accepted", where, formName(l), accepted)}
	}
	return nil
}

func (r *reader) forms(items []any, depth int) error {
	for _, it := range items {
		l, ok := it.(list)
		if !ok || len(l.items) == 0 {
			return &ParseError{r.p.line, r.p.col, fmt.Sprintf("expected a form, not %s", describe(it))}
		}
		if err := r.form(l, false, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// cond evaluates a condition: (param "K") is true when K is bound, (not
// COND) negates.
func (r *reader) cond(x any) (bool, error) {
	l, ok := x.(list)
	if ok && len(l.items) == 2 {
		switch l.items[0] {
		case Sym("param"):
			if k, ok := l.items[1].(Str); ok {
				_, bound := r.params[string(k)]
				return bound, nil
			}
		case Sym("not"):
			c, err := r.cond(l.items[1])
			return !c, err
		}
	}
	return false, fmt.Errorf("unsupported condition %s: only (param \"K\") and (not COND)", describe(x))
}

// substitute replaces defined names among a filter's arguments.
func (r *reader) substitute(f *Filter, depth int) {
	if f == nil || depth > maxDepth {
		return
	}
	for i, a := range f.Args {
		switch v := a.(type) {
		case Sym:
			if d, ok := r.defs[v]; ok {
				f.Args[i] = d
			}
		case *Filter:
			r.substitute(v, depth+1)
		}
	}
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

// list is a parsed parenthesised form and where it starts.
type list struct {
	items     []any
	line, col int
}

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
				m, err := toForm(list{items: v.items[1:]}, 1)
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
			// Operations are symbols and filters are forms.
			return Rule{}, fmt.Errorf("unexpected %s in a rule", describe(it))
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

// takeComment returns the comment lines since the last form, joined by
// spaces (empty lines left out), and forgets them.
func (p *parser) takeComment() string {
	lines := slices.DeleteFunc(p.comment, func(s string) bool { return s == "" })
	p.comment = nil
	return strings.Join(lines, " ")
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
				p.layer = unquoteComment(strings.TrimLeft(text, ";"))
				p.comment = nil
			} else {
				p.comment = append(p.comment, unquoteComment(strings.TrimPrefix(text, ";")))
			}
		default:
			return
		}
	}
}

// unquoteComment returns a comment line's text as the writer had it: the
// writer quotes a comment that would not read back as it is (a line break
// in it, a control character, space at either end) as a Go string literal
// (internal/plantext), and such a line is unquoted here.
func unquoteComment(text string) string {
	text = strings.TrimSpace(text)
	if s, err := plantext.Unquote(text); err == nil {
		return s
	}
	return text
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
		l := list{line: p.line, col: p.col}
		p.next()
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
