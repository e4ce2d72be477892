package gamecraft

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Formula is a parsed rubric score_formula: numbers, identifiers (BUILD, M1,
// D3, ...), + - * /, parentheses, unary minus and avg(...). It is parsed by a
// small recursive-descent parser so that rubric text is never executed.
type Formula struct {
	Source string
	root   node
}

// FormulaError is a syntax or evaluation error at a byte offset of the source.
type FormulaError struct {
	Pos int // 0-based byte offset into Source
	Msg string
}

func (e *FormulaError) Error() string { return fmt.Sprintf("formula: column %d: %s", e.Pos+1, e.Msg) }

type node interface {
	eval(vars map[string]float64) (float64, error)
	idents(add func(name string, pos int))
}

type numberNode struct{ v float64 }

type identNode struct {
	name string
	pos  int
}

type negNode struct{ x node }

type binaryNode struct {
	op   byte
	pos  int
	l, r node
}

type avgNode struct {
	pos  int
	args []node
}

func (n numberNode) eval(map[string]float64) (float64, error) { return n.v, nil }
func (n numberNode) idents(func(string, int))                 {}

func (n identNode) eval(vars map[string]float64) (float64, error) {
	v, ok := vars[n.name]
	if !ok {
		return 0, &FormulaError{Pos: n.pos, Msg: fmt.Sprintf("unknown identifier %q", n.name)}
	}
	return v, nil
}
func (n identNode) idents(add func(string, int)) { add(n.name, n.pos) }

func (n negNode) eval(vars map[string]float64) (float64, error) {
	v, err := n.x.eval(vars)
	return -v, err
}
func (n negNode) idents(add func(string, int)) { n.x.idents(add) }

func (n binaryNode) eval(vars map[string]float64) (float64, error) {
	l, err := n.l.eval(vars)
	if err != nil {
		return 0, err
	}
	r, err := n.r.eval(vars)
	if err != nil {
		return 0, err
	}
	switch n.op {
	case '+':
		return l + r, nil
	case '-':
		return l - r, nil
	case '*':
		return l * r, nil
	default:
		if r == 0 {
			return 0, &FormulaError{Pos: n.pos, Msg: "division by zero"}
		}
		return l / r, nil
	}
}
func (n binaryNode) idents(add func(string, int)) { n.l.idents(add); n.r.idents(add) }

func (n avgNode) eval(vars map[string]float64) (float64, error) {
	sum := 0.0
	for _, a := range n.args {
		v, err := a.eval(vars)
		if err != nil {
			return 0, err
		}
		sum += v
	}
	return sum / float64(len(n.args)), nil
}
func (n avgNode) idents(add func(string, int)) {
	for _, a := range n.args {
		a.idents(add)
	}
}

// parseFormula parses src; syntax errors are *FormulaError with the position.
func parseFormula(src string) (*Formula, error) {
	p := &parser{src: src}
	p.next()
	root, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEOF {
		return nil, p.errorf("unexpected %s", p.tok)
	}
	return &Formula{Source: src, root: root}, nil
}

// Eval evaluates the formula; an identifier missing from vars is an error
// naming its position.
func (f *Formula) Eval(vars map[string]float64) (float64, error) { return f.root.eval(vars) }

// Identifiers lists the distinct identifiers in the formula, sorted.
func (f *Formula) Identifiers() []string {
	seen := map[string]bool{}
	f.root.idents(func(name string, _ int) { seen[name] = true })
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// CheckIdentifiers reports the first identifier not in known, with its position.
func (f *Formula) CheckIdentifiers(known map[string]bool) error {
	var err error
	f.root.idents(func(name string, pos int) {
		if err == nil && !known[name] {
			err = &FormulaError{Pos: pos, Msg: fmt.Sprintf("unknown identifier %q", name)}
		}
	})
	return err
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokIdent
	tokOp // one of + - * / ( ) ,
)

type token struct {
	kind tokKind
	text string
	pos  int
}

func (t token) String() string {
	if t.kind == tokEOF {
		return "end of formula"
	}
	return strconv.Quote(t.text)
}

type parser struct {
	src string
	off int
	tok token
}

func (p *parser) errorf(format string, args ...any) error {
	return &FormulaError{Pos: p.tok.pos, Msg: fmt.Sprintf(format, args...)}
}

func isIdentStart(c byte) bool { return c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

// next scans one token; a bad character becomes a tokOp the parser rejects.
func (p *parser) next() {
	for p.off < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.off]) >= 0 {
		p.off++
	}
	start := p.off
	if p.off >= len(p.src) {
		p.tok = token{kind: tokEOF, pos: start}
		return
	}
	c := p.src[p.off]
	switch {
	case isDigit(c) || c == '.':
		for p.off < len(p.src) && (isDigit(p.src[p.off]) || p.src[p.off] == '.') {
			p.off++
		}
		// Exponent, e.g. 1e-3.
		if p.off < len(p.src) && (p.src[p.off]|0x20) == 'e' {
			q := p.off + 1
			if q < len(p.src) && (p.src[q] == '+' || p.src[q] == '-') {
				q++
			}
			if q < len(p.src) && isDigit(p.src[q]) {
				for q < len(p.src) && isDigit(p.src[q]) {
					q++
				}
				p.off = q
			}
		}
		p.tok = token{kind: tokNum, text: p.src[start:p.off], pos: start}
	case isIdentStart(c):
		for p.off < len(p.src) && (isIdentStart(p.src[p.off]) || isDigit(p.src[p.off])) {
			p.off++
		}
		p.tok = token{kind: tokIdent, text: p.src[start:p.off], pos: start}
	default:
		p.off++
		p.tok = token{kind: tokOp, text: p.src[start:p.off], pos: start}
	}
}

func (p *parser) isOp(s string) bool { return p.tok.kind == tokOp && p.tok.text == s }

// expr := term (('+'|'-') term)*
func (p *parser) expr() (node, error) {
	l, err := p.term()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.tok
		p.next()
		r, err := p.term()
		if err != nil {
			return nil, err
		}
		l = binaryNode{op: op.text[0], pos: op.pos, l: l, r: r}
	}
	return l, nil
}

// term := unary (('*'|'/') unary)*
func (p *parser) term() (node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") {
		op := p.tok
		p.next()
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = binaryNode{op: op.text[0], pos: op.pos, l: l, r: r}
	}
	return l, nil
}

// unary := '-' unary | primary
func (p *parser) unary() (node, error) {
	if p.isOp("-") {
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return negNode{x: x}, nil
	}
	return p.primary()
}

// primary := number | ident | 'avg' '(' expr (',' expr)* ')' | '(' expr ')'
func (p *parser) primary() (node, error) {
	switch {
	case p.tok.kind == tokNum:
		v, err := strconv.ParseFloat(p.tok.text, 64)
		if err != nil {
			return nil, p.errorf("bad number %q", p.tok.text)
		}
		p.next()
		return numberNode{v: v}, nil
	case p.tok.kind == tokIdent:
		id := p.tok
		p.next()
		if !p.isOp("(") {
			return identNode{name: id.text, pos: id.pos}, nil
		}
		if id.text != "avg" {
			return nil, &FormulaError{Pos: id.pos, Msg: fmt.Sprintf("unknown function %q (only avg is allowed)", id.text)}
		}
		p.next()
		var args []node
		for {
			a, err := p.expr()
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			if p.isOp(",") {
				p.next()
				continue
			}
			if !p.isOp(")") {
				return nil, p.errorf("expected \",\" or \")\" in avg(...), found %s", p.tok)
			}
			p.next()
			return avgNode{pos: id.pos, args: args}, nil
		}
	case p.isOp("("):
		p.next()
		x, err := p.expr()
		if err != nil {
			return nil, err
		}
		if !p.isOp(")") {
			return nil, p.errorf("expected \")\", found %s", p.tok)
		}
		p.next()
		return x, nil
	default:
		return nil, p.errorf("expected a number, identifier or \"(\", found %s", p.tok)
	}
}
