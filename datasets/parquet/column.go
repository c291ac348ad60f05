// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding"
	"github.com/parquet-go/parquet-go/format"
	"github.com/sparsevi/sparsevi/datasets"
)

// conv says how the values of a column's pages become numbers or labels.
type conv int

const (
	convInt32 conv = iota
	convUint32
	convInt64
	convUint64
	convFloat
	convDouble
	convDecimalFixed // a decimal stored as FIXED_LEN_BYTE_ARRAY
	convDecimalBytes // a decimal stored as BYTE_ARRAY
	// The conversions below give labels.
	convBool
	convBytes
	convFixed
	convUUID
	convDate
	convTimestamp
)

// numeric reports whether the values are numbers.
func (c conv) numeric() bool { return c < convBool }

// family names what a conversion gives, for comparing the schemas of the
// files of a directory: all numbers are one family, and each kind of
// label its own.
func (c conv) family() string {
	switch {
	case c.numeric():
		return "numbers"
	case c == convBool:
		return "booleans"
	case c == convDate:
		return "dates"
	case c == convTimestamp:
		return "timestamps"
	case c == convUUID:
		return "UUIDs"
	}
	return "bytes"
}

// colSpec is how one column of a file is read.
type colSpec struct {
	name  string
	typ   string // the Parquet type, for messages
	kind  datasets.Kind
	conv  conv
	scale float64       // a decimal's divisor, 10^scale, or 1
	exp   int           // a decimal's scale
	unit  time.Duration // a timestamp's unit
	utc   bool          // a timestamp is adjusted to UTC
}

// specOf returns how a column of type t is read; categorical forces labels.
func specOf(name string, t parquet.Type, categorical bool) (colSpec, error) {
	s := colSpec{name: name, typ: t.String(), scale: 1}
	var lt any
	if l := t.LogicalType(); l != nil {
		lt = l.Value
	}
	unsupported := func() (colSpec, error) {
		return colSpec{}, fmt.Errorf("%w %s", ErrUnsupported, s.typ)
	}
	if ct := t.ConvertedType(); ct != nil && *ct == deprecated.Interval {
		return unsupported()
	}
	switch t.Kind() {
	case parquet.Boolean:
		s.conv = convBool
	case parquet.Int32, parquet.Int64:
		is64 := t.Kind() == parquet.Int64
		s.conv = convInt32
		if is64 {
			s.conv = convInt64
		}
		switch v := lt.(type) {
		case nil, *format.NullType:
		case *format.IntType:
			if !v.IsSigned {
				s.conv++ // the unsigned conversion follows the signed one
			}
		case *format.DecimalType:
			if !s.decimal(v) {
				return unsupported()
			}
		case *format.DateType:
			if is64 {
				return unsupported()
			}
			s.conv = convDate
		case *format.TimestampType:
			if !is64 || v.Unit.Value == nil {
				return unsupported()
			}
			s.conv, s.unit, s.utc = convTimestamp, v.Unit.Value.Duration(), v.IsAdjustedToUTC
		default:
			return unsupported()
		}
	case parquet.Float:
		s.conv = convFloat
	case parquet.Double:
		s.conv = convDouble
	case parquet.ByteArray:
		switch v := lt.(type) {
		case nil, *format.StringType, *format.EnumType, *format.JsonType, *format.BsonType:
			s.conv = convBytes
		case *format.DecimalType:
			if !s.decimal(v) {
				return unsupported()
			}
			s.conv = convDecimalBytes
		default:
			return unsupported()
		}
	case parquet.FixedLenByteArray:
		switch v := lt.(type) {
		case nil:
			s.conv = convFixed
		case *format.DecimalType:
			if !s.decimal(v) {
				return unsupported()
			}
			s.conv = convDecimalFixed
		case *format.UUIDType:
			if t.Length() != 16 {
				return unsupported()
			}
			s.conv = convUUID
		default:
			return unsupported()
		}
	default:
		return unsupported()
	}
	s.kind = datasets.Categorical
	if s.conv.numeric() && !categorical {
		s.kind = datasets.Numeric
	}
	return s, nil
}

// decimal sets the scale of a decimal column, and reports whether it is
// one that is read.
func (s *colSpec) decimal(t *format.DecimalType) bool {
	if t.Scale < 0 || t.Scale > 22 {
		return false
	}
	s.exp = int(t.Scale)
	s.scale = math.Pow10(s.exp) // exact up to 1e22
	return true
}

// maxExact is the largest integer below which every integer is a float64.
const maxExact = 1 << 53

// decimal returns the float64 nearest to the decimal of the given
// unscaled value, as strconv.ParseFloat gives for its text: a division
// when both operands are exact, else an exact rational.
func (c *column) decimal(unscaled int64) float64 {
	if c.exp == 0 {
		return float64(unscaled)
	}
	if -maxExact <= unscaled && unscaled <= maxExact {
		return float64(unscaled) / c.scale
	}
	return c.bigDecimal(big.NewInt(unscaled))
}

func (c *column) bigDecimal(unscaled *big.Int) float64 {
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.exp)), nil)
	v, _ := new(big.Rat).SetFrac(unscaled, den).Float64()
	return v
}

// decimalBytes returns the decimal whose unscaled value is the big-endian
// two's complement b.
func (c *column) decimalBytes(b []byte) (float64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("empty decimal")
	}
	if len(b) <= 8 {
		v := int64(int8(b[0])) // the sign
		for _, x := range b[1:] {
			v = v<<8 | int64(x)
		}
		return c.decimal(v), nil
	}
	v := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return c.bigDecimal(v), nil
}

// maxIntern bounds the interning table of a column of labels that is not
// dictionary-encoded, as the CSV reader does, so that an identifier column
// does not keep a map of all its values.
const maxIntern = 1 << 12

// column gathers the values of one column, all files and row groups.
type column struct {
	colSpec
	index int // 1-based column number

	num  []float64
	str  []string
	miss []bool

	// The dictionary of the current column chunk, converted once.
	dict    parquet.Dictionary
	dictNum []float64
	dictStr []string

	intern map[string]string

	// Scratch for the values of one page.
	nums []float64
	strs []string
}

func newColumn(s colSpec, index, rows int) *column {
	c := &column{colSpec: s, index: index, miss: make([]bool, 0, rows)}
	if s.kind == datasets.Numeric {
		c.num = make([]float64, 0, rows)
	} else {
		c.str = make([]string, 0, rows)
		c.intern = make(map[string]string)
	}
	return c
}

// setConv makes c convert values as s says, keeping its kind: the
// columns of the files of a directory have one kind but may differ in
// type.
func (c *column) setConv(s colSpec) {
	c.conv, c.typ, c.scale, c.exp, c.unit, c.utc = s.conv, s.typ, s.scale, s.exp, s.unit, s.utc
}

func (c *column) len() int { return len(c.miss) }

// finish returns the column read. A column of labels with no label is
// Numeric, as a column of empty fields in a CSV file is, unless it was
// named in Options.Categorical.
func (c *column) finish(forced bool) *datasets.Column {
	if c.kind == datasets.Categorical && !forced && !slices.Contains(c.miss, false) {
		num := make([]float64, len(c.miss))
		for i := range num {
			num[i] = math.NaN()
		}
		return &datasets.Column{Name: c.name, Kind: datasets.Numeric, Num: num, Missing: c.miss}
	}
	return &datasets.Column{Name: c.name, Kind: c.kind, Num: c.num, Str: c.str, Missing: c.miss}
}

// page appends the rows of one page, whose first row follows row rows of
// the file.
func (c *column) page(p parquet.Page, row int64) error {
	n := int(p.NumValues())
	if int64(n) != p.NumRows() {
		return c.errorAt(row+1, fmt.Errorf("%w: a page of %d values holds %d rows", ErrCorrupt, n, p.NumRows()))
	}
	defs := p.DefinitionLevels() // nil when the column is required
	if defs != nil && len(defs) != n {
		return c.errorAt(row+1, fmt.Errorf("%w: %d definition levels for %d values", ErrCorrupt, len(defs), n))
	}
	present := n
	for _, d := range defs {
		if d == 0 {
			present--
		}
	}
	data := p.Data()
	var idx []int32
	if d := p.Dictionary(); d != nil {
		if d != c.dict {
			c.dict = d
			nd := d.Len()
			if err := c.values(d.Page().Data(), nd, true); err != nil {
				return c.errorAt(row+1, fmt.Errorf("%w: dictionary: %v", ErrCorrupt, err))
			}
		}
		idx = data.Int32()
		if len(idx) < present {
			return c.errorAt(row+1, fmt.Errorf("%w: %d dictionary indexes for %d values", ErrCorrupt, len(idx), present))
		}
		size := len(c.dictNum)
		if c.kind == datasets.Categorical {
			size = len(c.dictStr)
		}
		for _, k := range idx[:present] {
			if k < 0 || int(k) >= size {
				return c.errorAt(row+1, fmt.Errorf("%w: dictionary index %d out of range", ErrCorrupt, k))
			}
		}
	} else if err := c.values(data, present, false); err != nil {
		return c.errorAt(row+1, fmt.Errorf("%w: %v", ErrCorrupt, err))
	}

	if present == n { // no nulls: whole slices
		c.miss = appendFalse(c.miss, n)
		if c.kind == datasets.Categorical {
			start := len(c.str)
			if idx != nil {
				for _, k := range idx[:n] {
					c.str = append(c.str, c.dictStr[k])
				}
			} else {
				c.str = append(c.str, c.strs[:n]...)
			}
			for i, s := range c.str[start:] {
				c.miss[start+i] = s == "" // as in a CSV file, "" is missing
			}
			return nil
		}
		start := len(c.num)
		if idx != nil {
			for _, k := range idx[:n] {
				c.num = append(c.num, c.dictNum[k])
			}
		} else {
			c.num = append(c.num, c.nums[:n]...)
		}
		for i, v := range c.num[start:] {
			if v-v != 0 { // NaN or ±Inf
				return c.errorAt(row+int64(i)+1, fmt.Errorf("%w: %v", datasets.ErrNonFinite, v))
			}
		}
		return nil
	}
	if c.kind == datasets.Numeric {
		vals := c.nums
		k := 0
		for i := range n {
			if defs != nil && defs[i] == 0 {
				c.num = append(c.num, math.NaN())
				c.miss = append(c.miss, true)
				continue
			}
			var v float64
			if idx != nil {
				v = c.dictNum[idx[k]]
			} else {
				v = vals[k]
			}
			k++
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return c.errorAt(row+int64(i)+1, fmt.Errorf("%w: %v", datasets.ErrNonFinite, v))
			}
			c.num = append(c.num, v)
			c.miss = append(c.miss, false)
		}
		return nil
	}
	labels := c.strs
	k := 0
	for i := range n {
		if defs != nil && defs[i] == 0 {
			c.str = append(c.str, "")
			c.miss = append(c.miss, true)
			continue
		}
		var s string
		if idx != nil {
			s = c.dictStr[idx[k]]
		} else {
			s = labels[k]
		}
		k++
		c.str = append(c.str, s)
		c.miss = append(c.miss, s == "") // as in a CSV file, "" is missing
	}
	return nil
}

// appendFalse appends n false flags to b.
func appendFalse(b []bool, n int) []bool {
	b = slices.Grow(b, n)
	start := len(b)
	b = b[:start+n]
	clear(b[start:])
	return b
}

// values converts the first n values of data into c.nums or c.strs, or
// into the dictionary's c.dictNum or c.dictStr.
func (c *column) values(data encoding.Values, n int, dict bool) error {
	if c.kind == datasets.Numeric {
		dst := &c.nums
		if dict {
			dst = &c.dictNum
		}
		var err error
		*dst, err = c.numbers(data, n, (*dst)[:0])
		return err
	}
	dst := &c.strs
	if dict {
		dst = &c.dictStr
	}
	var err error
	*dst, err = c.labels(data, n, (*dst)[:0], dict)
	return err
}

// short reports that a page holds fewer values than its levels say.
func short(got, want int) error {
	return fmt.Errorf("%d values where %d are needed", got, want)
}

// numbers appends the first n values of data, converted to float64, to
// dst.
func (c *column) numbers(data encoding.Values, n int, dst []float64) ([]float64, error) {
	dst = slices.Grow(dst, n)
	switch c.conv {
	case convInt32:
		v := data.Int32()
		if len(v) < n {
			return dst, short(len(v), n)
		}
		for _, x := range v[:n] {
			dst = append(dst, c.decimal(int64(x)))
		}
	case convUint32:
		v := data.Uint32()
		if len(v) < n {
			return dst, short(len(v), n)
		}
		for _, x := range v[:n] {
			dst = append(dst, float64(x))
		}
	case convInt64:
		v := data.Int64()
		if len(v) < n {
			return dst, short(len(v), n)
		}
		if c.exp == 0 {
			for _, x := range v[:n] {
				dst = append(dst, float64(x))
			}
		} else {
			for _, x := range v[:n] {
				dst = append(dst, c.decimal(x))
			}
		}
	case convUint64:
		v := data.Uint64()
		if len(v) < n {
			return dst, short(len(v), n)
		}
		for _, x := range v[:n] {
			dst = append(dst, float64(x))
		}
	case convFloat:
		v := data.Float()
		if len(v) < n {
			return dst, short(len(v), n)
		}
		for _, x := range v[:n] {
			dst = append(dst, float64(x))
		}
	case convDouble:
		v := data.Double()
		if len(v) < n {
			return dst, short(len(v), n)
		}
		dst = append(dst, v[:n]...)
	case convDecimalFixed:
		b, size := data.FixedLenByteArray()
		if size <= 0 || len(b)/size < n {
			return dst, short(len(b)/max(size, 1), n)
		}
		for i := range n {
			v, err := c.decimalBytes(b[i*size : (i+1)*size])
			if err != nil {
				return dst, err
			}
			dst = append(dst, v)
		}
	case convDecimalBytes:
		b, off := data.ByteArray()
		if len(off) < n+1 && n > 0 {
			return dst, short(max(len(off)-1, 0), n)
		}
		for i := range n {
			lo, hi := off[i], off[i+1]
			if lo > hi || int(hi) > len(b) {
				return dst, fmt.Errorf("value %d has offsets %d, %d past %d bytes", i+1, lo, hi, len(b))
			}
			v, err := c.decimalBytes(b[lo:hi])
			if err != nil {
				return dst, err
			}
			dst = append(dst, v)
		}
	default:
		panic("parquet: numbers of a column of labels")
	}
	return dst, nil
}

// labels appends the first n values of data, converted to labels, to dst.
// The labels of a dictionary are new strings; those of a page are
// interned.
func (c *column) labels(data encoding.Values, n int, dst []string, dict bool) ([]string, error) {
	str := func(b []byte) string {
		if dict {
			return string(b)
		}
		if s, ok := c.intern[string(b)]; ok {
			return s
		}
		s := string(b)
		if len(c.intern) < maxIntern {
			c.intern[s] = s
		}
		return s
	}
	var scratch []byte
	if c.conv.numeric() { // a numeric column read as categorical
		nums, err := c.numbers(data, n, c.nums[:0])
		c.nums = nums
		if err != nil {
			return dst, err
		}
		for _, v := range nums {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				// The label the CSV reader gives a field "NaN" or
				// "Inf" in a categorical column.
				scratch = strconv.AppendFloat(scratch[:0], v, 'g', -1, 64)
			} else {
				scratch = appendNumber(scratch[:0], v)
			}
			dst = append(dst, str(scratch))
		}
		return dst, nil
	}
	switch c.conv {
	case convBool:
		bits := data.Boolean()
		if len(bits)*8 < n {
			return dst, short(len(bits)*8, n)
		}
		for i := range n {
			if bits[i/8]>>(i%8)&1 != 0 {
				dst = append(dst, "true")
			} else {
				dst = append(dst, "false")
			}
		}
	case convBytes:
		b, off := data.ByteArray()
		if len(off) < n+1 && n > 0 {
			return dst, short(max(len(off)-1, 0), n)
		}
		for i := range n {
			lo, hi := off[i], off[i+1]
			if lo > hi || int(hi) > len(b) {
				return dst, fmt.Errorf("value %d has offsets %d, %d past %d bytes", i+1, lo, hi, len(b))
			}
			dst = append(dst, str(b[lo:hi]))
		}
	case convFixed, convUUID:
		b, size := data.FixedLenByteArray()
		if size <= 0 || len(b)/size < n {
			return dst, short(len(b)/max(size, 1), n)
		}
		for i := range n {
			v := b[i*size : (i+1)*size]
			if c.conv == convUUID {
				scratch = appendUUID(scratch[:0], v)
				v = scratch
			}
			dst = append(dst, str(v))
		}
	case convDate:
		v := data.Int32()
		if len(v) < n {
			return dst, short(len(v), n)
		}
		for _, d := range v[:n] {
			scratch = time.Unix(int64(d)*86400, 0).UTC().AppendFormat(scratch[:0], "2006-01-02")
			dst = append(dst, str(scratch))
		}
	case convTimestamp:
		v := data.Int64()
		if len(v) < n {
			return dst, short(len(v), n)
		}
		layout := "2006-01-02 15:04:05.999999999"
		if c.utc {
			layout += "Z"
		}
		for _, x := range v[:n] {
			var t time.Time
			switch c.unit {
			case time.Millisecond:
				t = time.UnixMilli(x)
			case time.Microsecond:
				t = time.UnixMicro(x)
			default:
				t = time.Unix(0, x)
			}
			scratch = t.UTC().AppendFormat(scratch[:0], layout)
			dst = append(dst, str(scratch))
		}
	default:
		panic("parquet: labels of a numeric column")
	}
	return dst, nil
}

// appendNumber appends v as datasets.WriteCSV writes it: integers below
// 1e15 in full, other numbers in the shortest form that reads back.
func appendNumber(dst []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.AppendFloat(dst, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// appendUUID appends the canonical text of a 16-byte UUID.
func appendUUID(dst, u []byte) []byte {
	for i, part := range [][]byte{u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]} {
		if i > 0 {
			dst = append(dst, '-')
		}
		dst = hex.AppendEncode(dst, part)
	}
	return dst
}
