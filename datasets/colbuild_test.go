// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestStylesOf: whenever stylesOf says a style writes a decimal's value as
// the decimal, the style's text is the decimal, byte for byte; and the
// styles of the tools that write numbers are recognised.
func TestStylesOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var texts []string
	for range 20000 {
		v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		if rng.IntN(4) == 0 {
			v = math.Round(v)
		}
		texts = append(texts,
			strconv.FormatFloat(v, 'f', -1, 64), strconv.FormatFloat(v, 'g', -1, 64),
			strconv.FormatFloat(v, 'f', rng.IntN(20), 64), strconv.FormatFloat(v, 'g', 15, 64),
			strconv.FormatFloat(v, 'e', rng.IntN(18), 64))
	}
	texts = append(texts, "0", "-0", "0.0", "-0.0", "00", "1.", ".5", "+1", "1.50", "1.0", "10", "100.0",
		"0.10000000000000001", "0.1000000000000000", "123456789012345678", "1e5", "007", "1e-320",
		"0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000001")
	var scratch []byte
	for _, s := range texts {
		if !isDecimal(s) {
			continue
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(v, 0) {
			continue
		}
		for _, digits := range []int{0, 2, fractionDigits(s)} {
			got := stylesOf(s, v, digits, &scratch, allStyles)
			for _, st := range []textStyle{shortest, shortestPoint, fixedDigits} {
				if got&st != 0 {
					if w := string(st.append(nil, v, digits)); w != s {
						t.Errorf("stylesOf(%q, digits %d) has style %d, which writes %q", s, digits, st, w)
					}
				}
			}
		}
	}
	for _, c := range []struct {
		s      string
		digits int
		want   textStyles
	}{
		{"0.25", 3, shortest | shortestPoint},
		{"12", 0, shortest | fixedDigits},
		{"1.0", 1, shortestPoint | fixedDigits},
		{"-0.19502452677161553", 0, shortest | shortestPoint},
		{"0.16666666666666666", 17, shortest | shortestPoint | fixedDigits},
		{"1.50", 2, fixedDigits},
		{"1.5e3", 1, 0},
		{"007", 0, 0},
		{"0.10000000000000001", 17, fixedDigits},
	} {
		v, _ := strconv.ParseFloat(c.s, 64)
		if got := stylesOf(c.s, v, c.digits, &scratch, allStyles); got != c.want {
			t.Errorf("stylesOf(%q, digits %d) = %03b, want %03b", c.s, c.digits, got, c.want)
		}
	}
}

// TestLateCategorical: a column read as numbers until a label comes,
// far down the file, gets back the text of every field before it, byte
// for byte, whatever the way its numbers were written; the same labels
// as when it is named in Reader.Categorical.
func TestLateCategorical(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	writers := []func(v float64) string{
		func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) },
		func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) },
		func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
		func(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', 1, 64) },
		func(v float64) string { return strconv.FormatFloat(v, 'e', 3, 64) },
		func(v float64) string { return fmt.Sprintf("%.17g", v) },
		func(v float64) string { return "+" + strconv.FormatFloat(math.Abs(v), 'f', -1, 64) },
		func(v float64) string { return fmt.Sprintf("%03d", int(math.Abs(v))%1000) },
	}
	for w := range writers {
		for _, mixed := range []bool{false, true} {
			var b strings.Builder
			b.WriteString("a,b\n")
			var want []string
			for i := range 3000 {
				f := writers[w]
				if mixed {
					f = writers[rng.IntN(len(writers))]
				}
				s := f(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(8)-3)))
				switch {
				case i == 2999:
					s = "x"
				case i%97 == 5:
					s = "NA"
				case i%131 == 7:
					s = "nan"
				}
				want = append(want, s)
				fmt.Fprintf(&b, "%s,%d\n", s, i)
			}
			late, err := ReadCSV(strings.NewReader(b.String()))
			if err != nil {
				t.Fatal(err)
			}
			r := NewReader(strings.NewReader(b.String()))
			r.Categorical = []string{"a"}
			forced, err := r.Read()
			if err != nil {
				t.Fatal(err)
			}
			c, _ := late.Column("a")
			fc, _ := forced.Column("a")
			if c.Kind != Categorical || !slices.Equal(c.Str, fc.Str) || !slices.Equal(c.Missing, fc.Missing) {
				t.Fatalf("writer %d, mixed %v: the late categorical column differs from the forced one", w, mixed)
			}
			for i, s := range want {
				if s == "NA" {
					s = ""
				}
				if c.Str[i] != s {
					t.Fatalf("writer %d, mixed %v: row %d reads %q, written %q", w, mixed, i, c.Str[i], s)
				}
			}
		}
	}
}

// TestNonFiniteLate: a field spelling NaN in a column of numbers is an
// error naming its line when the column stays numeric, and a label when a
// later field makes the column categorical.
func TestNonFiniteLate(t *testing.T) {
	in := "a,b\n1,2\nnan,3\n1e999,4\n"
	_, err := ReadCSV(strings.NewReader(in))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || pe.Column != 1 || !strings.Contains(err.Error(), `"nan"`) {
		t.Errorf("got %v, want an error naming line 3, column 1, nan", err)
	}
	fr, err := ReadCSV(strings.NewReader(in + "z,5\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := fr.Column("a")
	if !slices.Equal(c.Str, []string{"1", "nan", "1e999", "z"}) {
		t.Errorf("labels %q", c.Str)
	}
}
