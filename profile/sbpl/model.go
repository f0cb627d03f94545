package sbpl

import "fmt"

// Effect is what a rule does when it matches.
type Effect int

const (
	Deny Effect = iota
	Allow
)

func (e Effect) String() string {
	if e == Allow {
		return "allow"
	}
	return "deny"
}

// Value is an argument of a filter or modifier: [Str], [Sym], [Int] or a
// nested [*Filter] (such as (param "KEY") or (path-literal "/x")).
type Value interface{ sbplValue() }

// Str is a string argument, always written through [Quote].
type Str string

// Sym is a bare symbol such as same-sandbox, REGULAR-FILE or unix-socket.
type Sym string

// Int is an integer argument, written in decimal.
type Int int64

func (Str) sbplValue()     {}
func (Sym) sbplValue()     {}
func (Int) sbplValue()     {}
func (*Filter) sbplValue() {}

// Filter is a filter form: (literal "/x"), (require-all f...), (remote ip
// "localhost:*"), (target same-sandbox). It is also used for nested forms in
// argument position, such as (param "KEY").
type Filter struct {
	Name string
	Args []Value
}

// Modifier is a (with name args...) form, e.g. (with message "tag").
type Modifier struct {
	Name string
	Args []Value
}

// Rule is one (allow|deny op... filter... modifier...) form. Several filters
// in one rule match when any of them matches.
type Rule struct {
	Effect    Effect
	Ops       []string
	Filters   []*Filter
	Modifiers []Modifier
	// Comment is written as a "; " line before the rule (one line).
	Comment string
	// Layer names the section of a profile the rule belongs to; the
	// writer emits a ";; layer" heading where it changes.
	Layer string
}

// Profile is a whole SBPL profile: (version N) followed by its rules.
// A lowered profile's first rule is (deny default).
type Profile struct {
	Version int
	Rules   []Rule
}

// Literal returns (literal path).
func Literal(path string) *Filter { return &Filter{Name: "literal", Args: []Value{Str(path)}} }

// Subpath returns (subpath path).
func Subpath(path string) *Filter { return &Filter{Name: "subpath", Args: []Value{Str(path)}} }

// Param returns (param key), the value of a compile-time parameter.
func Param(key string) *Filter { return &Filter{Name: "param", Args: []Value{Str(key)}} }

// F builds a filter from a name and arguments; strings become [Str].
func F(name string, args ...any) *Filter {
	f := &Filter{Name: name}
	for _, a := range args {
		switch v := a.(type) {
		case string:
			f.Args = append(f.Args, Str(v))
		case int:
			f.Args = append(f.Args, Int(v))
		case Value:
			f.Args = append(f.Args, v)
		default:
			panic(fmt.Sprintf("sbpl.F: unsupported argument %T", a))
		}
	}
	return f
}
