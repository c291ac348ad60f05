// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"fmt"
	"math"
	"strings"
)

// arith is an arithmetic expression of one column, as written inside I()
// or log(), sqrt() and exp(): numbers, the column, the operators + - * /
// and ^, a leading minus, parentheses and those three functions. It is
// evaluated row by row, so that new data are transformed as the training
// data were.
type arith struct {
	op   arithOp
	num  float64 // the value of a number
	text string  // a number as written, or the column's name
	l, r *arith  // the operands; l alone for a unary minus, a function or parentheses
}

type arithOp uint8

const (
	arithColumn arithOp = iota
	arithNumber
	arithAdd
	arithSub
	arithMul
	arithDiv
	arithPow
	arithNeg
	arithParen
	arithLog
	arithSqrt
	arithExp
)

// arithFuncs are the functions an arithmetic expression may call.
var arithFuncs = map[string]arithOp{"log": arithLog, "sqrt": arithSqrt, "exp": arithExp}

// compileArith compiles the expression n, which must use exactly one
// column (as often as it likes), and returns it with that column.
func compileArith(n node) (*arith, string, error) {
	col := ""
	var walk func(n node) (*arith, error)
	walk = func(n node) (*arith, error) {
		switch n := n.(type) {
		case *identNode:
			if n.tok.text == "." {
				return nil, errAt(n.tok, "'.' is not a column")
			}
			if col != "" && col != n.tok.text {
				return nil, errAt(n.tok, "an expression may use one column; for a product of columns write "+col+":"+n.tok.text)
			}
			col = n.tok.text
			return &arith{op: arithColumn, text: n.tok.text}, nil
		case *numNode:
			return &arith{op: arithNumber, num: number(n.tok), text: n.tok.text}, nil
		case *negNode:
			x, err := walk(n.x)
			if err != nil {
				return nil, err
			}
			return &arith{op: arithNeg, l: x}, nil
		case *parenNode:
			x, err := walk(n.x)
			if err != nil {
				return nil, err
			}
			return &arith{op: arithParen, l: x}, nil
		case *binNode:
			ops := map[tokKind]arithOp{tokPlus: arithAdd, tokMinus: arithSub, tokStar: arithMul, tokSlash: arithDiv, tokCaret: arithPow}
			op, ok := ops[n.op.kind]
			if !ok {
				return nil, errAt(n.op, n.op.text+" is not arithmetic: inside I() write + - * / or ^")
			}
			l, err := walk(n.l)
			if err != nil {
				return nil, err
			}
			r, err := walk(n.r)
			if err != nil {
				return nil, err
			}
			return &arith{op: op, l: l, r: r}, nil
		case *callNode:
			op, ok := arithFuncs[n.fn.text]
			if !ok {
				return nil, errAt(n.fn, "unknown function "+n.fn.text+"() in an expression (supported: log, sqrt, exp)")
			}
			if len(n.args) != 1 {
				return nil, errAt(n.fn, n.fn.text+"() takes one argument")
			}
			x, err := walk(n.args[0])
			if err != nil {
				return nil, err
			}
			return &arith{op: op, text: n.fn.text, l: x}, nil
		}
		return nil, errAt(n.first(), "not an arithmetic expression of a column")
	}
	a, err := walk(n)
	if err != nil {
		return nil, "", err
	}
	if col == "" {
		return nil, "", errAt(n.first(), "the expression uses no column")
	}
	return a, col, nil
}

// eval returns the expression's value where its column is x: NaN or an
// infinity where an operation is undefined or overflows.
func (a *arith) eval(x float64) float64 {
	switch a.op {
	case arithColumn:
		return x
	case arithNumber:
		return a.num
	case arithNeg:
		return -a.l.eval(x)
	case arithParen:
		return a.l.eval(x)
	case arithLog:
		v := a.l.eval(x)
		if v <= 0 {
			return math.NaN() // math.Log(0) is -Inf
		}
		return math.Log(v)
	case arithSqrt:
		return math.Sqrt(a.l.eval(x))
	case arithExp:
		return math.Exp(a.l.eval(x))
	}
	l, r := a.l.eval(x), a.r.eval(x)
	switch a.op {
	case arithAdd:
		return l + r
	case arithSub:
		return l - r
	case arithMul:
		return l * r
	case arithDiv:
		return l / r
	}
	return math.Pow(l, r)
}

// String returns the expression as R deparses it, which names lme4's
// coefficients: spaces around + - and *, none around / and ^.
func (a *arith) String() string {
	var b strings.Builder
	a.write(&b)
	return b.String()
}

func (a *arith) write(b *strings.Builder) {
	switch a.op {
	case arithColumn:
		b.WriteString(quoteName(a.text))
	case arithNumber:
		b.WriteString(a.text)
	case arithNeg:
		b.WriteByte('-')
		a.l.write(b)
	case arithParen:
		b.WriteByte('(')
		a.l.write(b)
		b.WriteByte(')')
	case arithLog, arithSqrt, arithExp:
		b.WriteString(a.text + "(")
		a.l.write(b)
		b.WriteByte(')')
	default:
		a.l.write(b)
		b.WriteString([...]string{arithAdd: " + ", arithSub: " - ", arithMul: " * ", arithDiv: "/", arithPow: "^"}[a.op])
		a.r.write(b)
	}
}

// undefined returns what makes the expression NaN or infinite where its
// column is x: the innermost operation that is so though its operands
// are finite, as "log(Days) of 0", or "" if the value is finite.
func (a *arith) undefined(x float64) string {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if finite(a.eval(x)) {
		return ""
	}
	for _, c := range []*arith{a.l, a.r} {
		if c != nil {
			if why := c.undefined(x); why != "" {
				return why
			}
		}
	}
	switch a.op {
	case arithLog, arithSqrt:
		return fmt.Sprintf("%s of %v", a, a.l.eval(x))
	case arithExp:
		return fmt.Sprintf("%s overflows at %v", a, a.l.eval(x))
	case arithDiv:
		if a.r.eval(x) == 0 {
			return fmt.Sprintf("%s divides by 0", a)
		}
	case arithPow:
		return fmt.Sprintf("%s is %v^%v", a, a.l.eval(x), a.r.eval(x))
	}
	return fmt.Sprintf("%s overflows", a)
}
