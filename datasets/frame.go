// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Kind is the type of the values held by a Column.
type Kind int

const (
	// Numeric columns hold float64 values in Num.
	Numeric Kind = iota
	// Categorical columns hold string labels in Str.
	Categorical
)

// String returns "numeric" or "categorical".
func (k Kind) String() string {
	switch k {
	case Numeric:
		return "numeric"
	case Categorical:
		return "categorical"
	default:
		return "Kind(" + strconv.Itoa(int(k)) + ")"
	}
}

// Column is one named variable of a Frame.
//
// Exactly one of Num and Str is used, as chosen by Kind. Missing has the
// same length as the value slice; where Missing[i] is true, Num[i] is NaN
// and Str[i] is "". A Column is a plain value: a Frame shares its columns
// with the caller, so a column must not be modified while a Frame that holds
// it is in use.
type Column struct {
	Name    string
	Kind    Kind
	Num     []float64 // Numeric: values, NaN where missing; nil for Categorical
	Str     []string  // Categorical: labels, "" where missing; nil for Numeric
	Missing []bool    // true where the value is missing (both kinds)

	// Warning, if not empty, says why the column's content is suspect:
	// the CSV reader sets it for a categorical column whose values are
	// numbers but for a few typos. Frame.Rows does not copy it.
	Warning string
}

// Len returns the number of values in c.
func (c *Column) Len() int {
	if c.Kind == Categorical {
		return len(c.Str)
	}
	return len(c.Num)
}

// Levels returns the sorted distinct non-missing labels of a categorical
// column. The order is the byte-wise string order, as R's default factor
// levels in the C locale, so "10" sorts before "2". Levels returns nil for
// a numeric column.
func (c *Column) Levels() []string {
	if c.Kind != Categorical {
		return nil
	}
	seen := make(map[string]struct{})
	var lev []string
	for i, s := range c.Str {
		if c.isMissing(i) {
			continue
		}
		if _, ok := seen[s]; !ok {
			seen[s] = struct{}{}
			lev = append(lev, s)
		}
	}
	slices.Sort(lev)
	return lev
}

// NumMissing returns the number of missing values in c.
func (c *Column) NumMissing() int {
	n := 0
	for i := range c.Len() {
		if c.isMissing(i) {
			n++
		}
	}
	return n
}

// isMissing tolerates a nil Missing slice, which means nothing is missing.
func (c *Column) isMissing(i int) bool {
	return c.Missing != nil && c.Missing[i]
}

// NewNumeric returns a numeric column holding v. NaN values are marked
// missing. The slice v is used, not copied.
func NewNumeric(name string, v []float64) *Column {
	miss := make([]bool, len(v))
	for i, x := range v {
		miss[i] = math.IsNaN(x)
	}
	return &Column{Name: name, Kind: Numeric, Num: v, Missing: miss}
}

// NewCategorical returns a categorical column holding s. Empty labels are
// marked missing. The slice s is used, not copied.
func NewCategorical(name string, s []string) *Column {
	miss := make([]bool, len(s))
	for i, x := range s {
		miss[i] = x == ""
	}
	return &Column{Name: name, Kind: Categorical, Str: s, Missing: miss}
}

// Errors returned by NewFrame and Frame methods.
var (
	ErrLength         = errors.New("datasets: column length mismatch")
	ErrDuplicate      = errors.New("datasets: duplicate column name")
	ErrEmptyName      = errors.New("datasets: empty column name")
	ErrNoColumn       = errors.New("datasets: no such column")
	ErrBadColumn      = errors.New("datasets: malformed column")
	ErrNotNumeric     = errors.New("datasets: column is not numeric")
	ErrNotCategorical = errors.New("datasets: column is not categorical")
)

// Frame is a set of equal-length named columns: the rows are observations.
// The zero Frame is empty and ready to use with Add.
type Frame struct {
	cols  []*Column
	index map[string]int
	nrows int
}

// NewFrame returns a Frame holding cols in the given order. The columns must
// have equal lengths and unique non-empty names. The columns are shared, not
// copied.
func NewFrame(cols ...*Column) (*Frame, error) {
	f := &Frame{}
	for _, c := range cols {
		if err := f.Add(c); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// NumRows returns the number of rows of f.
func (f *Frame) NumRows() int { return f.nrows }

// NumCols returns the number of columns of f.
func (f *Frame) NumCols() int { return len(f.cols) }

// Names returns the column names of f in order, in a new slice.
func (f *Frame) Names() []string {
	names := make([]string, len(f.cols))
	for i, c := range f.cols {
		names[i] = c.Name
	}
	return names
}

// Columns returns the columns of f in order, in a new slice. The columns
// themselves are shared with f.
func (f *Frame) Columns() []*Column {
	return slices.Clone(f.cols)
}

// Column returns the column called name and whether it exists.
func (f *Frame) Column(name string) (*Column, bool) {
	i, ok := f.index[name]
	if !ok {
		return nil, false
	}
	return f.cols[i], true
}

// Add appends c to f. It returns an error if c's name is empty or already
// used, if c's length differs from the number of rows of a non-empty f, or
// if c's slices are inconsistent with its Kind. A nil c.Missing is set to
// all false.
func (f *Frame) Add(c *Column) error {
	if c == nil {
		return fmt.Errorf("%w: nil column", ErrBadColumn)
	}
	if c.Name == "" {
		return ErrEmptyName
	}
	if _, dup := f.index[c.Name]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicate, c.Name)
	}
	n := c.Len()
	switch c.Kind {
	case Numeric:
		if c.Str != nil {
			return fmt.Errorf("%w: numeric column %q has labels", ErrBadColumn, c.Name)
		}
	case Categorical:
		if c.Num != nil {
			return fmt.Errorf("%w: categorical column %q has numbers", ErrBadColumn, c.Name)
		}
	default:
		return fmt.Errorf("%w: column %q has unknown kind %v", ErrBadColumn, c.Name, c.Kind)
	}
	if c.Missing == nil {
		c.Missing = make([]bool, n)
	}
	if len(c.Missing) != n {
		return fmt.Errorf("%w: column %q has %d values and %d missing flags", ErrBadColumn, c.Name, n, len(c.Missing))
	}
	if len(f.cols) > 0 && n != f.nrows {
		return fmt.Errorf("%w: column %q has %d rows, frame has %d", ErrLength, c.Name, n, f.nrows)
	}
	if f.index == nil {
		f.index = make(map[string]int)
	}
	f.index[c.Name] = len(f.cols)
	f.cols = append(f.cols, c)
	f.nrows = n
	return nil
}

// SetCategorical turns the numeric column called name into a categorical
// one in place. Each value v becomes the label strconv.FormatFloat(v, 'g',
// -1, 64), so 1 becomes "1" and 2.5 becomes "2.5"; missing values stay
// missing. A column that is already categorical is left unchanged.
func (f *Frame) SetCategorical(name string) error {
	c, ok := f.Column(name)
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoColumn, name)
	}
	if c.Kind == Categorical {
		return nil
	}
	str := make([]string, len(c.Num))
	for i, v := range c.Num {
		if c.Missing[i] || math.IsNaN(v) {
			c.Missing[i] = true
			continue
		}
		str[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	c.Kind, c.Str, c.Num = Categorical, str, nil
	return nil
}

// Rows returns a new Frame holding the rows idx of f in the given order;
// indices may repeat. The columns of the result are new. Rows panics if an
// index is out of range.
func (f *Frame) Rows(idx []int) *Frame {
	g := &Frame{index: make(map[string]int, len(f.cols)), nrows: len(idx)}
	for _, c := range f.cols {
		d := &Column{Name: c.Name, Kind: c.Kind, Missing: make([]bool, len(idx))}
		switch c.Kind {
		case Numeric:
			d.Num = make([]float64, len(idx))
			for k, i := range idx {
				d.Num[k] = c.Num[i]
			}
		case Categorical:
			d.Str = make([]string, len(idx))
			for k, i := range idx {
				d.Str[k] = c.Str[i]
			}
		}
		for k, i := range idx {
			d.Missing[k] = c.Missing[i]
		}
		g.index[d.Name] = len(g.cols)
		g.cols = append(g.cols, d)
	}
	return g
}
