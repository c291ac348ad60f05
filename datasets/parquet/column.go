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
	"time"

	pq "github.com/parquet-go/parquet-go"
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

// family names what a conversion gives, for comparing the files of a
// directory: all numbers are one family, each kind of label its own.
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
	return "strings"
}

// colSpec is how one column of a file is read.
type colSpec struct {
	name    string
	typ     string // the Parquet type, for messages
	conv    conv
	decimal bool
	exp     int           // a decimal's scale
	scale   float64       // 10^exp
	unit    time.Duration // a timestamp's unit
	utc     bool          // a timestamp is adjusted to UTC
}

// specOf returns how a column of type t is read.
func specOf(name string, t pq.Type) (colSpec, error) {
	s := colSpec{name: name, typ: t.String(), scale: 1}
	var lt any
	if l := t.LogicalType(); l != nil {
		lt = l.Value
	}
	unsupported := func() (colSpec, error) {
		return colSpec{}, fmt.Errorf("%w: type %s", ErrUnsupported, s.typ)
	}
	if ct := t.ConvertedType(); ct != nil && *ct == deprecated.Interval {
		return unsupported()
	}
	switch t.Kind() {
	case pq.Boolean:
		s.conv = convBool
	case pq.Int32, pq.Int64:
		is64 := t.Kind() == pq.Int64
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
			if !s.setDecimal(v) {
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
	case pq.Float:
		s.conv = convFloat
	case pq.Double:
		s.conv = convDouble
	case pq.ByteArray:
		switch v := lt.(type) {
		case nil, *format.StringType, *format.EnumType, *format.JsonType, *format.BsonType:
			s.conv = convBytes
		case *format.DecimalType:
			if !s.setDecimal(v) {
				return unsupported()
			}
			s.conv = convDecimalBytes
		default:
			return unsupported()
		}
	case pq.FixedLenByteArray:
		switch v := lt.(type) {
		case nil:
			s.conv = convFixed
		case *format.DecimalType:
			if !s.setDecimal(v) {
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
	return s, nil
}

// setDecimal sets the scale of a decimal column, and reports whether it
// is one that is read.
func (s *colSpec) setDecimal(t *format.DecimalType) bool {
	if t.Scale < 0 || t.Scale > 22 {
		return false
	}
	s.decimal = true
	s.exp = int(t.Scale)
	s.scale = math.Pow10(s.exp) // exact up to 1e22
	return true
}

// integer reports whether the column holds integers that may lie beyond
// 2^53.
func (s *colSpec) integer() bool {
	return !s.decimal && (s.conv == convInt64 || s.conv == convUint64)
}

// maxExact is the largest integer below which every integer is a float64.
const maxExact = 1 << 53

// decimalOf returns the float64 nearest to the decimal of the given
// unscaled value, as strconv.ParseFloat gives for its text: a division
// when both operands are exact, else an exact rational.
func (s *colSpec) decimalOf(unscaled int64) float64 {
	if s.exp == 0 && -maxExact <= unscaled && unscaled <= maxExact {
		return float64(unscaled)
	}
	if -maxExact <= unscaled && unscaled <= maxExact {
		return float64(unscaled) / s.scale
	}
	return s.bigDecimal(big.NewInt(unscaled))
}

func (s *colSpec) bigDecimal(unscaled *big.Int) float64 {
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s.exp)), nil)
	v, _ := new(big.Rat).SetFrac(unscaled, den).Float64()
	return v
}

// decimalBytes returns the decimal whose unscaled value is the big-endian
// two's complement b.
func (s *colSpec) decimalBytes(b []byte) (float64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("empty decimal")
	}
	if len(b) <= 8 {
		v := int64(int8(b[0])) // the sign
		for _, x := range b[1:] {
			v = v<<8 | int64(x)
		}
		return s.decimalOf(v), nil
	}
	v := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return s.bigDecimal(v), nil
}

// maxIntern bounds the interning table of a column of labels that is not
// dictionary-encoded, so that an identifier column does not keep a map of
// all its values.
const maxIntern = 1 << 12

// column gathers the values of one column over all files and row groups.
type column struct {
	colSpec
	first   string // the family of the first file's column
	numeric bool

	num  []float64
	str  []string
	miss []bool

	// The dictionary of the current column chunk, converted once.
	dict    pq.Dictionary
	dictNum []float64
	dictStr []string

	intern map[string]string

	// Scratch for the values of one page.
	nums []float64
	strs []string

	// The text of integers beyond 2^53, stored as NaN in nums or dictNum,
	// by their index there.
	bad, dictBad map[int]string
}

// setConv makes c convert values as s says; the columns of the files of a
// directory have one kind but may differ in type.
func (c *column) setConv(s colSpec) {
	if c.first == "" {
		c.first = s.conv.family()
		c.numeric = s.conv.numeric()
	}
	c.colSpec = s
}

// alloc allocates the column at its final length.
func (c *column) alloc(rows int) {
	c.miss = make([]bool, 0, rows)
	if c.numeric {
		c.num = make([]float64, 0, rows)
	} else {
		c.str = make([]string, 0, rows)
		c.intern = make(map[string]string)
	}
}

func (c *column) len() int { return len(c.miss) }

// finish returns the column read. A column of labels with no label is
// numeric, as a column of empty fields in a CSV file is.
func (c *column) finish() *datasets.Column {
	if !c.numeric && !slices.Contains(c.miss, false) {
		num := make([]float64, len(c.miss))
		for i := range num {
			num[i] = math.NaN()
		}
		return &datasets.Column{Name: c.name, Kind: datasets.Numeric, Num: num, Missing: c.miss}
	}
	if c.numeric {
		return &datasets.Column{Name: c.name, Kind: datasets.Numeric, Num: c.num, Missing: c.miss}
	}
	return &datasets.Column{Name: c.name, Kind: datasets.Categorical, Str: c.str, Missing: c.miss}
}

// badNumber returns the error of a NaN or infinite v, the k-th value of
// the page or, from a dictionary, the k-th of the dictionary.
func (c *column) badNumber(v float64, k int, dict bool) error {
	if c.integer() {
		text := c.bad[k]
		if dict {
			text = c.dictBad[k]
		}
		return fmt.Errorf("%w: %s", ErrInexact, text)
	}
	return fmt.Errorf("%w: %v", datasets.ErrNonFinite, v)
}

// page appends the rows of one page, whose first row follows row rows of
// the file.
func (c *column) page(p pq.Page, row int64) error {
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
			if err := c.values(d.Page().Data(), d.Len(), true); err != nil {
				return c.errorAt(row+1, fmt.Errorf("%w: dictionary: %v", ErrCorrupt, err))
			}
		}
		idx = data.Int32()
		if len(idx) < present {
			return c.errorAt(row+1, fmt.Errorf("%w: %d dictionary indexes for %d values", ErrCorrupt, len(idx), present))
		}
		size := len(c.dictStr)
		if c.numeric {
			size = len(c.dictNum)
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
		start := len(c.miss)
		c.miss = slices.Grow(c.miss, n)[:start+n]
		if !c.numeric {
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
		clear(c.miss[start:])
		if idx != nil {
			for _, k := range idx[:n] {
				c.num = append(c.num, c.dictNum[k])
			}
		} else {
			c.num = append(c.num, c.nums[:n]...)
		}
		for i, v := range c.num[start:] {
			if v-v != 0 { // NaN or ±Inf
				k, dict := i, idx != nil
				if dict {
					k = int(idx[i])
				}
				return c.errorAt(row+int64(i)+1, c.badNumber(v, k, dict))
			}
		}
		return nil
	}
	k := 0
	for i := range n {
		if defs[i] == 0 {
			if c.numeric {
				c.num = append(c.num, math.NaN())
			} else {
				c.str = append(c.str, "")
			}
			c.miss = append(c.miss, true)
			continue
		}
		if !c.numeric {
			var s string
			if idx != nil {
				s = c.dictStr[idx[k]]
			} else {
				s = c.strs[k]
			}
			c.str = append(c.str, s)
			c.miss = append(c.miss, s == "") // as in a CSV file, "" is missing
			k++
			continue
		}
		var v float64
		j, dict := k, idx != nil
		if dict {
			j = int(idx[k])
			v = c.dictNum[j]
		} else {
			v = c.nums[k]
		}
		k++
		if v-v != 0 {
			return c.errorAt(row+int64(i)+1, c.badNumber(v, j, dict))
		}
		c.num = append(c.num, v)
		c.miss = append(c.miss, false)
	}
	return nil
}

// values converts the first n values of data into c.nums or c.strs, or
// into the dictionary's c.dictNum or c.dictStr.
func (c *column) values(data encoding.Values, n int, dict bool) error {
	var err error
	if c.numeric {
		dst, bad := &c.nums, &c.bad
		if dict {
			dst, bad = &c.dictNum, &c.dictBad
		}
		clear(*bad)
		*dst, err = c.numbers(data, n, (*dst)[:0], bad)
		return err
	}
	dst := &c.strs
	if dict {
		dst = &c.dictStr
	}
	*dst, err = c.labels(data, n, (*dst)[:0], dict)
	return err
}

// short reports that a page holds fewer values than its levels say.
func short(got, want int) error {
	return fmt.Errorf("%d values where %d are needed", got, want)
}

// exact returns x as a float64, or NaN, recording x's text in *bad at
// index k, when it is beyond 2^53.
func exact[T int64 | uint64](x T, k int, bad *map[int]string) float64 {
	if x > maxExact || x < 0 && int64(x) < -maxExact {
		if *bad == nil {
			*bad = make(map[int]string)
		}
		(*bad)[k] = fmt.Sprint(x)
		return math.NaN()
	}
	return float64(x)
}

// numbers appends the first n values of data, converted to float64, to
// dst.
func (c *column) numbers(data encoding.Values, n int, dst []float64, bad *map[int]string) ([]float64, error) {
	dst = slices.Grow(dst, n)
	switch c.conv {
	case convInt32:
		v := data.Int32()
		if len(v) < n {
			return dst, short(len(v), n)
		}
		if c.decimal {
			for _, x := range v[:n] {
				dst = append(dst, c.decimalOf(int64(x)))
			}
		} else {
			for _, x := range v[:n] {
				dst = append(dst, float64(x))
			}
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
		if c.decimal {
			for _, x := range v[:n] {
				dst = append(dst, c.decimalOf(x))
			}
		} else {
			for k, x := range v[:n] {
				dst = append(dst, exact(x, k, bad))
			}
		}
	case convUint64:
		v := data.Uint64()
		if len(v) < n {
			return dst, short(len(v), n)
		}
		for k, x := range v[:n] {
			dst = append(dst, exact(x, k, bad))
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
		return dst, fmt.Errorf("%w: the numbers of a column of %s", ErrSchema, c.conv.family())
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
	switch c.conv {
	case convBool:
		bits := data.Boolean()
		if len(bits)*8 < n {
			return dst, short(len(bits)*8, n)
		}
		for i := range n {
			if bits[i/8]>>(i%8)&1 != 0 {
				dst = append(dst, "TRUE")
			} else {
				dst = append(dst, "FALSE")
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
		return dst, fmt.Errorf("%w: the labels of a column of %s", ErrSchema, c.conv.family())
	}
	return dst, nil
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
