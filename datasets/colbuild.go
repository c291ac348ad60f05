// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// colBuilder makes one column as its fields are read. A column is numeric
// until a field that is not a number comes: its fields go straight into
// float64s, and the text of a field is kept only when its number would
// not give it back (see textStyle). At the first field that is not a
// number the column turns categorical: the labels of the rows before are
// restored from their numbers and the text kept, and the rows after are
// labels. A column listed in Reader.Categorical is categorical from the
// start.
//
// Holding the text of every field until the kind was known took about
// 2.5 times the final columns while reading.
type colBuilder struct {
	text bool // categorical: labels go into str
	// sure says the column is numeric for certain (Reader.Numeric): its
	// fields are numbers, and nothing is kept to give their text back.
	sure    bool
	num     []float64
	str     []string
	missing []bool

	// styles holds the textStyles that give back every field of a numeric
	// column not in odd; digits is the fraction digits of fixedDigits,
	// those of the first number (-1 before it).
	styles textStyles
	digits int
	// odd lists the rows whose text no live style gives back, ascending;
	// their text is oddText[oddEnds[k-1]:oddEnds[k]].
	odd     []int
	oddEnds []uint32
	oddText []byte
	// bad is the first row whose field spells NaN or an infinity or is out
	// of float64's range, -1 if none: an error if the column stays numeric.
	bad     int
	badText string
	// badLine is the line of the first such field when it is of a row
	// a filter left out (skip), 0 if none; bad is then -1.
	badLine int
	scratch []byte

	// prev is the label of the last row, shared by the next one when it is
	// the same (the rows of a subject follow each other); intern shares the
	// first maxIntern distinct labels.
	prev    string
	hasPrev bool
	intern  map[string]string
}

// maxColumnText is the most text a column may keep aside while it is
// read, so that its offsets fit in 32 bits.
const maxColumnText = math.MaxUint32

// maxIntern bounds the interning table of a categorical column, so that an
// identifier column does not keep a map of all its values.
const maxIntern = 1 << 12

// init readies c for a column, categorical from the start if forced.
func (c *colBuilder) init(forced bool) {
	c.text = forced
	c.styles = allStyles
	c.digits = -1
	c.bad = -1
}

// grow reserves room for rows rows.
func (c *colBuilder) grow(rows int) {
	if c.text {
		c.str = slices.Grow(c.str, rows-len(c.str))
	} else {
		c.num = slices.Grow(c.num, rows-len(c.num))
	}
	c.missing = slices.Grow(c.missing, rows-len(c.missing))
}

// add appends the field b of row row (the rows come in order), with x,
// parseNumber's reading of it.
func (c *colBuilder) add(row int, b []byte, missing bool, x number) error {
	if c.sure {
		return c.addNumber(b, missing, x)
	}
	c.missing = append(c.missing, missing)
	if c.text {
		if missing {
			c.str = append(c.str, "")
			return nil
		}
		c.str = append(c.str, c.label(b))
		return nil
	}
	if missing {
		c.num = append(c.num, math.NaN())
		return nil
	}
	s := unsafeString(b)
	if x.kind == notParsed {
		if isNonFinite(s) {
			// Still numeric by the rule of Reader, but an error if
			// it stays so.
			c.num = append(c.num, math.NaN())
			c.setBad(row, s)
			return c.keepOdd(row, b)
		}
		c.toText()
		c.str = append(c.str, c.label(b))
		return nil
	}
	if x.kind == outOfRange {
		c.num = append(c.num, math.NaN())
		c.setBad(row, s)
		return c.keepOdd(row, b)
	}
	v := x.v
	c.num = append(c.num, v)
	if c.digits < 0 {
		c.digits = fractionDigits(s)
	}
	live := c.styles & stylesOf(s, v, c.digits, &c.scratch, c.styles)
	if live == 0 {
		return c.keepOdd(row, b)
	}
	c.styles = live
	return nil
}

// addNumber appends the field b, with x, parseNumber's reading of it, to
// a column that is numeric for certain.
func (c *colBuilder) addNumber(b []byte, missing bool, x number) error {
	c.missing = append(c.missing, missing)
	if missing {
		c.num = append(c.num, math.NaN())
		return nil
	}
	if x.kind != finite {
		return fmt.Errorf("%w: %q in a column read as numeric (Reader.Numeric)", ErrNotNumber, b)
	}
	c.num = append(c.num, x.v)
	return nil
}

// setBad records row as the first with a non-finite number.
func (c *colBuilder) setBad(row int, s string) {
	if c.bad < 0 && c.badLine == 0 {
		c.bad, c.badText = row, strings.Clone(s)
	}
}

// skip reads the field b of a row that a filter leaves out, starting on
// line: it stores nothing, but the field decides the column's kind, and a
// non-finite number is an error if the column stays numeric, as if the
// row were kept. x is parseNumber's reading of b.
func (c *colBuilder) skip(b []byte, missing bool, line int, x number) {
	if c.text || c.sure || missing {
		return
	}
	s := unsafeString(b)
	if x.kind == notParsed {
		if !isNonFinite(s) {
			c.toText()
			return
		}
	} else if x.kind == finite {
		return
	}
	if c.bad < 0 && c.badLine == 0 {
		c.badLine, c.badText = line, strings.Clone(s)
	}
}

// keepOdd keeps the text of row, which its number does not give back.
func (c *colBuilder) keepOdd(row int, b []byte) error {
	if len(c.oddText)+len(b) > maxColumnText {
		return ErrColumnTooLarge
	}
	c.odd = append(c.odd, row)
	c.oddText = append(c.oddText, b...)
	c.oddEnds = append(c.oddEnds, uint32(len(c.oddText)))
	return nil
}

// label returns b as a string, sharing the memory of an equal label read
// before where it can.
func (c *colBuilder) label(b []byte) string {
	if c.hasPrev && c.prev == string(b) {
		return c.prev
	}
	s, ok := c.intern[string(b)]
	if !ok {
		s = string(b)
		if c.intern == nil {
			c.intern = make(map[string]string)
		}
		if len(c.intern) < maxIntern {
			c.intern[s] = s
		}
	}
	c.prev, c.hasPrev = s, true
	return s
}

// labelsUTF8 reports whether every label of the column is surely UTF-8:
// when the interning table holds them all, checking its distinct labels
// says so, where checking every row cost 3% of reading a file of
// labels (BenchmarkReadCSV). False means that a row must be checked.
func (c *colBuilder) labelsUTF8() bool {
	if len(c.intern) >= maxIntern {
		return false
	}
	for s := range c.intern {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}

// toText turns a numeric column categorical: the rows read so far get
// back their text.
func (c *colBuilder) toText() {
	style := c.styles.first()
	c.str = make([]string, len(c.num), max(cap(c.num), len(c.num)+1))
	next, lo := 0, uint32(0)
	for i, v := range c.num {
		if next < len(c.odd) && c.odd[next] == i {
			hi := c.oddEnds[next]
			c.str[i] = c.label(c.oddText[lo:hi])
			next, lo = next+1, hi
			continue
		}
		if c.missing[i] {
			continue
		}
		c.scratch = style.append(c.scratch[:0], v, c.digits)
		c.str[i] = c.label(c.scratch)
	}
	c.text = true
	c.num, c.odd, c.oddEnds, c.oddText, c.bad, c.badText, c.badLine = nil, nil, nil, nil, -1, "", 0
}

// build returns the column. On error it returns the offending row, or -1
// for a row left out by a filter (whose line is badLine).
func (c *colBuilder) build(name string) (*Column, int, error) {
	if c.text {
		return &Column{Name: name, Kind: Categorical, Str: c.str, Missing: c.missing}, 0, nil
	}
	if c.bad >= 0 || c.badLine > 0 {
		return nil, c.bad, fmt.Errorf("%w: %q", ErrNonFinite, c.badText)
	}
	return &Column{Name: name, Kind: Numeric, Num: c.num, Missing: c.missing}, 0, nil
}

// A textStyle is a way of writing numbers in which a column's text may be
// given back by its numbers: the shortest decimal that reads back exactly,
// in fixed notation ("0.1", "12", as this package, R and most tools write
// them); the same with ".0" after integers (Python's and pandas' "1.0");
// or a fixed number of fraction digits, those of the column's first number
// (printf's "%.2f": "1.50").
type textStyle uint8

const (
	shortest textStyle = 1 << iota
	shortestPoint
	fixedDigits
)

// textStyles is a set of textStyles.
type textStyles = textStyle

const allStyles = shortest | shortestPoint | fixedDigits

// first returns the first style of the set s.
func (s textStyles) first() textStyle { return s & -s }

// append appends v written in style s, with digits fraction digits for
// fixedDigits.
func (s textStyle) append(dst []byte, v float64, digits int) []byte {
	switch s {
	case fixedDigits:
		return strconv.AppendFloat(dst, v, 'f', digits, 64)
	case shortestPoint:
		dst = strconv.AppendFloat(dst, v, 'f', -1, 64)
		if v == math.Trunc(v) {
			dst = append(dst, ".0"...)
		}
		return dst
	}
	return strconv.AppendFloat(dst, v, 'f', -1, 64)
}

// fractionDigits returns the number of digits after the point of the
// decimal s, 0 when it has none.
func fractionDigits(s string) int {
	i := strings.IndexByte(s, '.')
	if i < 0 {
		return 0
	}
	n := 0
	for _, b := range []byte(s[i+1:]) {
		if b < '0' || b > '9' {
			break
		}
		n++
	}
	return n
}

// maxExactDigits is the most significant decimal digits that float64 keeps
// for every number in its normal range: a decimal of at most this many
// digits is the shortest that reads back as its own float64 (DBL_DIG).
const maxExactDigits = 15

// stylesOf returns which of the styles in want write v, the value of the
// decimal s, as s; digits is fixedDigits' number of fraction digits. It
// reads s's digits, and formats v only when s has more digits than
// float64 surely keeps.
func stylesOf(s string, v float64, digits int, scratch *[]byte, want textStyles) textStyles {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	intLo := i
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	intHi := i
	// An integer part is "0" or has no leading zero; a sign is "-" only.
	if intHi == intLo || (s[intLo] == '0' && intHi-intLo > 1) {
		return 0
	}
	fracLo, fracHi := i, i
	if i < len(s) && s[i] == '.' {
		i++
		fracLo = i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		fracHi = i
		if fracHi == fracLo {
			return 0 // "1."
		}
	}
	if i != len(s) {
		return 0 // an exponent, or a "+"
	}
	point := fracLo > intHi
	frac := s[fracLo:fracHi]
	integral := strings.Trim(frac, "0") == ""
	var out textStyles
	if !point || frac[len(frac)-1] != '0' {
		out |= shortest
	}
	if (integral && frac == "0") || (!integral && frac[len(frac)-1] != '0') {
		out |= shortestPoint
	}
	if len(frac) == digits {
		out |= fixedDigits
	}
	out &= want
	if out == 0 {
		return 0
	}
	// Significant digits: from the first non-zero digit to the last (to
	// the last digit written, for fixedDigits).
	first, last, n := -1, -1, 0
	for _, part := range [2]string{s[intLo:intHi], frac} {
		for k := range len(part) {
			if part[k] != '0' {
				if first < 0 {
					first = n
				}
				last = n
			}
			n++
		}
	}
	if first < 0 {
		return out // zero, of either sign: every style that matched writes it so
	}
	shortDigits, fixedDigitsN := last+1-first, n-first
	if a := math.Abs(v); a < 1e-300 || a > 1e300 {
		shortDigits, fixedDigitsN = math.MaxInt, math.MaxInt
	}
	if out&(shortest|shortestPoint) != 0 && shortDigits > maxExactDigits {
		*scratch = strconv.AppendFloat((*scratch)[:0], v, 'f', -1, 64)
		t := *scratch
		if string(t) != s {
			out &^= shortest
		}
		if integral {
			t = append(t, ".0"...)
			*scratch = t
		}
		if string(t) != s {
			out &^= shortestPoint
		}
	}
	if out&fixedDigits != 0 && fixedDigitsN > maxExactDigits {
		*scratch = strconv.AppendFloat((*scratch)[:0], v, 'f', digits, 64)
		if string(*scratch) != s {
			out &^= fixedDigits
		}
	}
	return out
}

// unsafeString returns b as a string sharing its memory: for parsing and
// lookups only, while b does not change.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
