// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// badInput is one entry of the catalogue: an input the library must reject
// at a given stage, with the place the error must name.
type badInput struct {
	name    string
	csv     string
	formula string
	family  string // for glmm.ParseFamily; "" leaves the family to Build
	opts    func(*formula.Options)

	stage stage
	is    error    // a sentinel the error must wrap, or nil
	msg   []string // substrings the message must hold

	// The place the error must name, by the stage's error type: exactly
	// one of these is set for the read, parse and build stages.
	pe *datasets.ParseError // Line, Column and Name are compared
	se *formula.SyntaxError // Pos and Token are compared
	de *formula.DataError   // Token, Pos, Column and Row are compared
}

const (
	pois  = "y ~ t + x + (1 | id)"
	bern  = "b ~ t + x + (1 | id)"
	binom = "cbind(s, n - s) ~ t + x + (1 | id)"
)

func badInputs() []badInput {
	base := baseTable()
	lines := strings.SplitAfter(base.csv(), "\n")
	withLine := func(k int, s string) string { // replace line k (1-based)
		c := append([]string(nil), lines...)
		c[k-1] = s
		return strings.Join(c, "")
	}
	header := lines[0]
	return []badInput{
		// ---- CSV ----
		{name: "empty file", csv: "", formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrEmptyInput,
			pe: &datasets.ParseError{Line: 1}, msg: []string{"line 1: empty input"}},
		{name: "only blank lines", csv: "\n\r\n\n", formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrEmptyInput,
			pe: &datasets.ParseError{Line: 4}, msg: []string{"line 4: empty input"}},
		{name: "byte order mark only", csv: "\xef\xbb\xbf", formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrEmptyInput,
			pe: &datasets.ParseError{Line: 1}, msg: []string{"empty input"}},
		{name: "header only", csv: header, formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrNoRows,
			pe: &datasets.ParseError{Line: 2}, msg: []string{"line 2: no data rows"}},
		{name: "header only without line end", csv: strings.TrimSuffix(header, "\n"), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrNoRows,
			pe: &datasets.ParseError{Line: 2}, msg: []string{"line 2: no data rows"}},
		{name: "duplicated column names", csv: withLine(1, "id,t,x,x,b,s,n\n"), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrDuplicateHeader,
			pe:  &datasets.ParseError{Line: 1, Column: 4, Name: "x"},
			msg: []string{`line 1, column 4 ("x")`, "also column 3"}},
		{name: "empty column name", csv: withLine(1, "id,t, ,y,b,s,n\n"), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrHeaderName,
			pe: &datasets.ParseError{Line: 1, Column: 3}, msg: []string{"line 1, column 3"}},
		{name: "ragged row, a field short", csv: withLine(6, "s2,0,0.3,1,0,1\n"), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrFieldCount,
			pe:  &datasets.ParseError{Line: 6, Column: 7, Name: "n"},
			msg: []string{`line 6, column 7 ("n")`, "got 6, header has 7"}},
		{name: "ragged row, a field too many", csv: withLine(9, "s2,3,0.3,1,0,1,5,extra\n"), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrFieldCount,
			pe: &datasets.ParseError{Line: 9, Column: 8}, msg: []string{"line 9, column 8", "got 8, header has 7"}},
		{name: "NaN in a numeric column", csv: base.set(3, "x", "NaN").csv(), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrNonFinite,
			pe: &datasets.ParseError{Line: 4, Column: 3, Name: "x"}, msg: []string{`line 4, column 3 ("x")`, `"NaN"`}},
		{name: "-Inf in a numeric column", csv: base.set(10, "y", "-Inf").csv(), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrNonFinite,
			pe: &datasets.ParseError{Line: 11, Column: 4, Name: "y"}, msg: []string{`line 11, column 4 ("y")`, `"-Inf"`}},
		{name: "number overflowing float64", csv: base.set(2, "t", "1e999").csv(), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrNonFinite,
			pe: &datasets.ParseError{Line: 3, Column: 2, Name: "t"}, msg: []string{`line 3, column 2 ("t")`, `"1e999"`}},
		{name: "unterminated quote", csv: base.set(4, "id", `"s1`).csv(), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrQuote,
			pe: &datasets.ParseError{Line: 5, Column: 1, Name: "id"}, msg: []string{"line 5, column 1", "quote opened on line 5 not closed"}},
		{name: "bare quote in a field", csv: base.set(7, "x", `0."5`).csv(), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrBareQuote,
			pe: &datasets.ParseError{Line: 8, Column: 3, Name: "x"}, msg: []string{`line 8, column 3 ("x")`, "bare"}},
		{name: "text after a closing quote", csv: base.set(5, "id", `"s2"x`).csv(), formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrQuote,
			pe: &datasets.ParseError{Line: 6, Column: 1, Name: "id"}, msg: []string{"line 6, column 1", "text after closing quote"}},
		// A runaway quote swallows the file until the record limit; the
		// limit is hit on line 6, the quote opened on line 5.
		{name: "runaway quote hits the record limit", csv: strings.Join(lines[:4], "") + `"s1,3,0.5,1,0,1,5` + "\n" + strings.Repeat("x", datasets.DefaultMaxLineBytes) + "\n",
			formula: pois, family: "poisson",
			stage: stRead, is: datasets.ErrLineTooLong,
			pe:  &datasets.ParseError{Line: 6, Column: 1, Name: "id"},
			msg: []string{"line 6, column 1", "record too long", "the record started on line 5", "the quoted field opened on line 5 is still open"}},

		// ---- family ----
		{name: "unknown family", csv: base.csv(), formula: pois, family: "gamma",
			stage: stFamily, msg: []string{`unknown family "gamma"`, "poisson, bernoulli, binomial, gaussian or negbinomial"}},
		{name: "invalid family value in Options", csv: base.csv(), formula: pois,
			opts:  func(o *formula.Options) { o.Family = glmm.Family(7) },
			stage: stBuild, de: &formula.DataError{Token: "Options.Family"},
			msg: []string{"unknown family Family(7)"}},
		{name: "numeric response without a family", csv: base.csv(), formula: pois,
			stage: stBuild, de: &formula.DataError{Token: "y", Pos: 1},
			msg: []string{`"y" at character 1`, "needs a family"}},

		// ---- formula syntax ----
		{name: "formula with no response", csv: base.csv(), formula: "~ t + (1 | id)", family: "poisson",
			stage: stParse, se: &formula.SyntaxError{Pos: 1, Token: "~"},
			msg: []string{`"~" at character 1`, "missing response"}},
		{name: "empty formula", csv: base.csv(), formula: "  ", family: "poisson",
			stage: stParse, se: &formula.SyntaxError{Pos: 3},
			msg: []string{"at the end", "empty formula"}},
		{name: "formula without ~", csv: base.csv(), formula: "y t + (1 | id)", family: "poisson",
			stage: stParse, se: &formula.SyntaxError{Pos: 3, Token: "t"},
			msg: []string{`"t" at character 3`, "want ~"}},
		{name: "unsupported function poly()", csv: base.csv(), formula: "y ~ poly(t, 2) + (1 | id)", family: "poisson",
			stage: stParse, se: &formula.SyntaxError{Pos: 5, Token: "poly"},
			msg: []string{`"poly" at character 5`, "poly() is not supported; write the powers"}},
		{name: "I() of two columns", csv: base.csv(), formula: "y ~ I(t*x) + (1 | id)", family: "poisson",
			stage: stParse, se: &formula.SyntaxError{Pos: 9, Token: "x"},
			msg: []string{`"x" at character 9`, "for a product of columns write t:x"}},
		{name: "unmatched parenthesis", csv: base.csv(), formula: "y ~ t + (1 | id", family: "poisson",
			stage: stParse, se: &formula.SyntaxError{Pos: 9, Token: "("},
			msg: []string{`"(" at character 9`, "unmatched ("}},
		{name: "stray character", csv: base.csv(), formula: "y ~ t $ x + (1 | id)", family: "poisson",
			stage: stParse, se: &formula.SyntaxError{Pos: 7, Token: "$"},
			msg: []string{`"$" at character 7`}},
		{name: "random term outside parentheses", csv: base.csv(), formula: "y ~ t + 1 | id", family: "poisson",
			stage: stParse, se: &formula.SyntaxError{Pos: 11, Token: "|"},
			msg: []string{`"|" at character 11`, "must be in parentheses"}},

		// ---- formula against data ----
		{name: "fixed-effect column not in the data", csv: base.csv(), formula: "y ~ t + z + (1 | id)", family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "z", Pos: 9, Column: "z"},
			msg: []string{`"z" at character 9`, "no such column", "columns: id, t, x, y, b, s, n"}},
		{name: "random-effect column not in the data", csv: base.csv(), formula: "y ~ t + (1 + w | id)", family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "w", Pos: 14, Column: "w"},
			msg: []string{`"w" at character 14`, "no such column"}},
		{name: "grouping factor not in the data", csv: base.csv(), formula: "y ~ t + (1 | subject)", family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "subject", Pos: 14, Column: "subject"},
			msg: []string{`"subject" at character 14`, "no such column"}},
		{name: "no random-effects term", csv: base.csv(), formula: "y ~ t + x", family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "~", Pos: 3},
			msg: []string{`"~" at character 3`, "no random-effects term"}},
		{name: "random slopes on a crossed factor", csv: base.csv(), formula: "y ~ t + (1 + t | id) + (1 + t | b)", family: "poisson",
			stage: stBuild, is: formula.ErrUnsupported, de: &formula.DataError{Token: "b", Pos: 33},
			msg: []string{`"b" at character 33`, "random slopes for b", "crossed"}},
		{name: "uncorrelated random effects ||", csv: base.csv(), formula: "y ~ t + (1 + t || id)", family: "poisson",
			stage: stBuild, is: formula.ErrUnsupported, de: &formula.DataError{Token: "||", Pos: 16},
			msg: []string{`"||" at character 16`}},
		{name: "grouping factor with a single level", csv: base.setAll("id", func(int, string) string { return "s1" }).csv(),
			formula: pois, family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "id", Pos: 18, Column: "id"},
			msg: []string{`"id" at character 18`, `single level {"s1"}`, "at least 2 groups"}},
		{name: "categorical predictor with a single level", csv: base.addCol("k", func(int, []string) string { return "a" }).csv(),
			formula: "y ~ t + k + (1 | id)", family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "k", Pos: 9, Column: "k"},
			msg: []string{`"k" at character 9`, `1 level(s) {"a"}`}},
		{name: "text in the numeric response", csv: base.set(7, "y", "three").csv(), formula: pois, family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "y", Pos: 1, Column: "y"},
			msg: []string{`"y" at character 1`, "categorical response needs the bernoulli family"}},
		{name: "text in a cbind count", csv: base.set(7, "n", "five").csv(), formula: binom,
			stage: stBuild, de: &formula.DataError{Token: "n", Pos: 10, Column: "n", Row: 7},
			msg: []string{`"n" at character 10`, "row 7", `categorical ("five" is not a number)`, "cbind() needs numeric counts"}},
		{name: "text in a log() argument", csv: base.set(7, "t", "late").csv(), formula: "y ~ log(t) + (1 | id)", family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "log(t)", Pos: 5, Column: "t", Row: 7},
			msg: []string{`"log(t)" at character 5`, "log() needs a numeric column"}},
		{name: "log of a non-positive value", csv: base.csv(), formula: "y ~ log(t) + (1 | id)", family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "log(t)", Pos: 5, Column: "t", Row: 1},
			msg: []string{"row 1", "log of 0"}},
		{name: "missing response, default policy", csv: base.set(5, "y", "NA").csv(), formula: pois, family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "y", Pos: 1, Column: "y", Row: 5},
			msg: []string{`"y" at character 1`, "row 5", "missing value", "DropMissing"}},
		{name: "missing covariate, default policy", csv: base.set(9, "x", "").csv(), formula: pois, family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "x", Pos: 9, Column: "x", Row: 9},
			msg: []string{`"x" at character 9`, "row 9", "missing value"}},
		{name: "missing subject label, default policy", csv: base.set(2, "id", "?").csv(), formula: pois, family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "id", Pos: 18, Column: "id", Row: 2},
			msg: []string{`"id" at character 18`, "row 2", "missing value"}},
		{name: "every row incomplete under DropMissing", csv: base.setAll("y", func(int, string) string { return "NA" }).csv(),
			formula: pois, family: "poisson", opts: func(o *formula.Options) { o.Missing = formula.DropMissing },
			stage: stBuild, de: &formula.DataError{},
			msg: []string{"no row is complete"}},

		// ---- crossed factors ----
		{name: "crossed factor with a single level", csv: base.addCol("k", func(int, []string) string { return "a" }).csv(),
			formula: "y ~ t + (1 | id) + (1 | k)", family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "k", Pos: 25, Column: "k"},
			msg: []string{`"k"`, "single level"}},
		{name: "crossed factors with too many levels", csv: manyLevels(glmm.MaxCrossedLevels + 1), formula: "y ~ t + (1 | id) + (1 | item)", family: "poisson",
			stage: stBuild, is: glmm.ErrUnsupportedModel, de: &formula.DataError{Token: "item", Pos: 25, Column: "item"},
			msg: []string{`"item" at character 25`, "crossed factor", fmt.Sprintf("%d levels", glmm.MaxCrossedLevels+1), fmt.Sprintf("at most %d", glmm.MaxCrossedLevels)}},
		{name: "factor nested inconsistently (-nest local)", csv: base.addCol("k", func(k int, _ []string) string { return string(rune('a' + k%3)) }).csv(),
			formula: "y ~ t + (1 | id) + (1 | k)", family: "poisson", opts: func(o *formula.Options) { o.Nest = formula.NestAlways },
			stage: stBuild, is: glmm.ErrNotNested, de: &formula.DataError{Row: 2},
			msg: []string{"row 2", "not nested", "level s1 of id", "levels b and c of k"}},
		{name: "local factor not in the formula", csv: base.csv(), formula: pois, family: "poisson",
			opts:  func(o *formula.Options) { o.LocalFactor = "subject" },
			stage: stBuild, de: &formula.DataError{Token: "Options.LocalFactor"},
			msg: []string{`"subject" is not a grouping factor`, "id"}},

		{name: "probit link for counts", csv: base.csv(), formula: pois, family: "poisson",
			opts:  func(o *formula.Options) { o.Link = glmm.Probit },
			stage: stBuild, is: glmm.ErrConfig, de: &formula.DataError{},
			msg: []string{"probit link is for the bernoulli and binomial families, not poisson"}},

		// ---- responses the family cannot produce ----
		{name: "negative negative-binomial count", csv: base.set(3, "y", "-1").csv(), formula: pois, family: "negbinomial",
			stage: stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "y", Pos: 1, Column: "y", Row: 3},
			msg: []string{"row 3", "negbinomial response -1 is not a non-negative integer"}},
		{name: "categorical gaussian response", csv: base.addCol("g", func(k int, _ []string) string { return string(rune('a' + k%2)) }).csv(),
			formula: "g ~ t + (1 | id)", family: "gaussian",
			stage: stBuild, de: &formula.DataError{Token: "g", Pos: 1, Column: "g"},
			msg: []string{"bernoulli family, not gaussian"}},
		{name: "negative count", csv: base.set(3, "y", "-1").csv(), formula: pois, family: "poisson",
			stage: stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "y", Pos: 1, Column: "y", Row: 3},
			msg: []string{"row 3", "poisson response -1 is not a non-negative integer"}},
		{name: "non-integer count", csv: base.set(8, "y", "2.5").csv(), formula: pois, family: "poisson",
			stage: stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "y", Pos: 1, Column: "y", Row: 8},
			msg: []string{"row 8", "poisson response 2.5"}},
		{name: "bernoulli response of 2", csv: base.set(11, "b", "2").csv(), formula: bern, family: "bernoulli",
			stage: stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "b", Pos: 1, Column: "b", Row: 11},
			msg: []string{"row 11", "bernoulli response 2 is not 0 or 1"}},
		{name: "bernoulli response of 0.5", csv: base.set(1, "b", "0.5").csv(), formula: bern, family: "bernoulli",
			stage: stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "b", Pos: 1, Column: "b", Row: 1},
			msg: []string{"row 1", "bernoulli response 0.5"}},
		{name: "categorical response with three levels", csv: base.addCol("g", func(k int, _ []string) string { return string(rune('a' + k%3)) }).csv(),
			formula: "g ~ t + (1 | id)",
			stage:   stBuild, de: &formula.DataError{Token: "g", Pos: 1, Column: "g"},
			msg: []string{"two levels", `found 3 {"a", "b", "c"}`}},
		{name: "successes above trials", csv: base.set(6, "s", "7").csv(), formula: binom,
			stage: stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "cbind(s, n - s)", Pos: 7, Column: "s", Row: 6},
			msg: []string{"row 6", "7 successes exceed 5 trials"}},
		// In the next cases the bad value is in the trials or failures
		// column, which the error names (Pos is that column's token in
		// the response).
		{name: "zero trials", csv: base.set(12, "s", "0").set(12, "n", "0").csv(), formula: binom,
			stage: stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "cbind(s, n - s)", Pos: 10, Column: "n", Row: 12},
			msg: []string{"row 12", "the trials n", "number of trials 0 is not a positive integer"}},
		{name: "non-integer trials", csv: base.set(13, "n", "4.5").csv(), formula: binom,
			stage: stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "cbind(s, n - s)", Pos: 10, Column: "n", Row: 13},
			msg: []string{"row 13", `data column "n"`, "number of trials 4.5"}},
		{name: "negative failures", csv: base.addCol("f", func(k int, row []string) string {
			if k == 14 {
				return "-1"
			}
			return "2"
		}).set(14, "s", "0").csv(), formula: "cbind(s, f) ~ t + (1 | id)",
			stage: stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "cbind(s, f)", Pos: 10, Column: "f", Row: 14},
			msg: []string{"row 14", "the failures f (trials are s + f)", "number of trials -1"}},
		{name: "non-integer failures", csv: base.addCol("f", func(k int, row []string) string {
			if k == 3 {
				return "1.5"
			}
			return "2"
		}).csv(), formula: "cbind(s, f) ~ t + (1 | id)",
			stage: stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "cbind(s, f)", Pos: 10, Column: "f", Row: 3},
			msg: []string{"row 3", `data column "f"`}},
		{name: "negative successes with cbind(s, f)", csv: base.addCol("f", func(int, []string) string { return "2" }).set(8, "s", "-1").csv(),
			formula: "cbind(s, f) ~ t + (1 | id)",
			stage:   stBuild, is: glmm.ErrResponse, de: &formula.DataError{Token: "cbind(s, f)", Pos: 7, Column: "s", Row: 8},
			msg: []string{"row 8", "binomial successes -1"}},
		{name: "cbind response with the poisson family", csv: base.csv(), formula: binom, family: "poisson",
			stage: stBuild, de: &formula.DataError{Token: "cbind", Pos: 1},
			msg: []string{"cbind() response needs the binomial family, not poisson"}},
		{name: "negative weight", csv: base.addCol("w", func(k int, _ []string) string {
			if k == 4 {
				return "-1"
			}
			return "1"
		}).csv(), formula: pois, family: "poisson", opts: func(o *formula.Options) { o.Weights = "w" },
			stage: stBuild, is: glmm.ErrConfig, de: &formula.DataError{Token: "Options.Weights", Column: "w", Row: 4},
			msg: []string{"row 4", "negative weight -1"}},
		{name: "huge weight", csv: base.addCol("w", func(k int, _ []string) string {
			if k == 9 {
				return "1e300"
			}
			return "1"
		}).csv(), formula: pois, family: "poisson", opts: func(o *formula.Options) { o.Weights = "w" },
			stage: stBuild, is: glmm.ErrConfig, de: &formula.DataError{Token: "Options.Weights", Column: "w", Row: 9},
			msg: []string{`data column "w"`, "row 9", "weight 1e+300 exceeds 1e+12"}},

		// ---- options ----
		{name: "categorical weights column", csv: base.csv(), formula: pois, family: "poisson",
			opts:  func(o *formula.Options) { o.Weights = "id" },
			stage: stBuild, de: &formula.DataError{Token: "Options.Weights", Column: "id", Row: 1},
			msg: []string{`data column "id"`, "weights must be numeric"}},
		{name: "offset column not in the data", csv: base.csv(), formula: pois, family: "poisson",
			opts:  func(o *formula.Options) { o.Offset = "exposure" },
			stage: stBuild, de: &formula.DataError{Token: "Options.Offset", Column: "exposure"},
			msg: []string{`data column "exposure"`, "no such column"}},
		// The prior's errors name neither the option nor a token.
		{name: "NaN prior standard deviation", csv: base.csv(), formula: pois, family: "poisson",
			opts:  func(o *formula.Options) { o.PriorSD = math.NaN() },
			stage: stBuild, is: glmm.ErrConfig, de: &formula.DataError{},
			msg: []string{"prior standard deviation NaN is not positive and finite"}},
		{name: "negative prior standard deviation", csv: base.csv(), formula: pois, family: "poisson",
			opts:  func(o *formula.Options) { o.PriorSD = -1 },
			stage: stBuild, is: glmm.ErrConfig, de: &formula.DataError{},
			msg: []string{"prior standard deviation -1 is not positive and finite"}},

		// ---- fixed-effect designs that cannot be identified ----
		{name: "constant fixed-effect column", csv: base.addCol("c", func(int, []string) string { return "3" }).csv(),
			formula: "y ~ t + c + (1 | id)", family: "poisson",
			stage: stBuild, is: glmm.ErrRankDeficient, de: &formula.DataError{Token: "c"},
			msg: []string{"formula: c: design column", `linear combination of "(Intercept)"`}},
		{name: "duplicated fixed-effect column", csv: base.addCol("x2", func(_ int, row []string) string { return row[2] }).csv(),
			formula: "y ~ t + x + x2 + (1 | id)", family: "poisson",
			stage: stBuild, is: glmm.ErrRankDeficient, de: &formula.DataError{Token: "x2"},
			msg: []string{"formula: x2: design column", `linear combination of "x"`}},
		{name: "all-zero fixed-effect column", csv: base.addCol("z0", func(int, []string) string { return "0" }).csv(),
			formula: "y ~ t + z0 + (1 | id)", family: "poisson",
			stage: stBuild, is: glmm.ErrRankDeficient, de: &formula.DataError{Token: "z0"},
			msg: []string{"formula: z0: design column", "all zero"}},
	}
}

// TestBadInputCatalogue runs every bad input through the whole pipeline
// and checks that it stops at the expected stage with an error that names
// the row, column or token at fault, and that nothing panics.
func TestBadInputCatalogue(t *testing.T) {
	cases := badInputs()
	if len(cases) < 25 {
		t.Fatalf("only %d cases", len(cases))
	}
	set := vi.Settings{MaxIter: 100, FinalDraws: 50}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := pipeline(t, c.csv, c.formula, c.family, c.opts, set, true)
			if out.err == nil {
				t.Fatalf("no error; the pipeline got to stage %v", out.stage)
			}
			if out.stage != c.stage {
				t.Fatalf("failed at stage %v, want %v: %v", out.stage, c.stage, out.err)
			}
			msg := out.err.Error()
			t.Logf("%v: %s", out.stage, msg)
			if c.is != nil && !errors.Is(out.err, c.is) {
				t.Errorf("error %q does not wrap %q", msg, c.is)
			}
			for _, s := range c.msg {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q does not contain %q", msg, s)
				}
			}
			switch c.stage {
			case stRead:
				var pe *datasets.ParseError
				if !errors.As(out.err, &pe) {
					t.Fatalf("error %T is not a *datasets.ParseError", out.err)
				}
				if pe.Line != c.pe.Line || pe.Column != c.pe.Column || pe.Name != c.pe.Name {
					t.Errorf("place line %d, column %d, name %q; want %d, %d, %q", pe.Line, pe.Column, pe.Name, c.pe.Line, c.pe.Column, c.pe.Name)
				}
			case stParse:
				var se *formula.SyntaxError
				if !errors.As(out.err, &se) {
					t.Fatalf("error %T is not a *formula.SyntaxError", out.err)
				}
				if se.Pos != c.se.Pos || se.Token != c.se.Token {
					t.Errorf("place column %d, token %q; want %d, %q", se.Pos, se.Token, c.se.Pos, c.se.Token)
				}
			case stBuild:
				var de *formula.DataError
				if !errors.As(out.err, &de) {
					t.Fatalf("error %T is not a *formula.DataError", out.err)
				}
				if de.Token != c.de.Token || de.Pos != c.de.Pos || de.Column != c.de.Column || de.Row != c.de.Row {
					t.Errorf("place token %q at %d, column %q, row %d; want %q at %d, %q, %d",
						de.Token, de.Pos, de.Column, de.Row, c.de.Token, c.de.Pos, c.de.Column, c.de.Row)
				}
			}
		})
	}
}

// TestBadSettings: settings out of their range, as a program calling the
// library could pass them, end in an error naming the field and its value
// before any iteration, or in a finite fit; never a panic, a hang or a NaN
// state. Settings that are valid but extreme fit.
func TestBadSettings(t *testing.T) {
	m := smallModel(t, "poisson", 40, 3)
	ref, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 1, MaxIter: 300})
	checkResult(t, "reference", ref, err, vi.MaxIterations)
	nan, inf := math.NaN(), math.Inf(1)
	ok := []vi.Status{vi.Converged, vi.MaxIterations}
	cases := []struct {
		name   string
		set    vi.Settings
		status []vi.Status // nil: an error and no result
		msg    string      // in the error, if not empty; "Settings." ones wrap vi.ErrSettings
		same   bool        // the fit must equal the reference
	}{
		{name: "unknown method", set: vi.Settings{Method: vi.Method(7)}, msg: "vi: unknown method Method(7)"},
		{name: "NaN step", set: vi.Settings{Rule: vi.Snngm{Alpha: nan}}, msg: "Snngm.Alpha is NaN"},
		{name: "infinite step", set: vi.Settings{Rule: vi.Snngm{Alpha: inf}}, msg: "Snngm.Alpha is +Inf"},
		{name: "negative step", set: vi.Settings{Rule: vi.Snngm{Alpha: -0.01}}, msg: "Snngm.Alpha is -0.01"},
		{name: "NaN Alpha0", set: vi.Settings{Rule: vi.Snngm{Alpha0: nan}}, msg: "Snngm.Alpha0 is NaN"},
		{name: "infinite Alpha0", set: vi.Settings{Rule: vi.Snngm{Alpha0: inf}}, msg: "Snngm.Alpha0 is +Inf"},
		{name: "negative Alpha0", set: vi.Settings{Rule: vi.Snngm{Alpha0: -1}}, msg: "Snngm.Alpha0 is -1"},
		{name: "Adam with Beta1 = 1", set: vi.Settings{Rule: vi.Adam{Beta1: 1}}, msg: "Adam.Beta1 is 1"},
		{name: "Adam with Beta2 = 1", set: vi.Settings{Rule: vi.Adam{Beta2: 1}}, msg: "Adam.Beta2 is 1"},
		{name: "Adam with NaN Eps", set: vi.Settings{Rule: vi.Adam{Eps: nan}}, msg: "Adam.Eps is NaN"},
		{name: "Adam with NaN Beta1", set: vi.Settings{Rule: vi.Adam{Beta1: nan}}, msg: "Adam.Beta1 is NaN"},
		{name: "RVB PGA with infinite step", set: vi.Settings{Method: vi.BlockDiag, Rule: vi.PGA{Alpha: inf}}, msg: "PGA.Alpha is +Inf"},
		{name: "VOGN with NaN step", set: vi.Settings{Rule: vi.VOGN{Alpha: nan}}, msg: "VOGN.Alpha is NaN"},
		{name: "VOGN with Beta2 = 1", set: vi.Settings{Rule: vi.VOGN{Beta2: 1}}, msg: "VOGN.Beta2 is 1"},
		{name: "Adam with Beta1 = 2", set: vi.Settings{Rule: vi.Adam{Beta1: 2}}, msg: "Adam.Beta1 is 2"},
		{name: "Nagm with NaN clip", set: vi.Settings{Rule: vi.Nagm{Clip: nan}}, msg: "Nagm.Clip is NaN"},
		{name: "Nagm with Beta1 = 1", set: vi.Settings{Rule: vi.Nagm{Beta1: 1}}, msg: "Nagm.Beta1 is 1"},
		{name: "Nagm with infinite clip", set: vi.Settings{Rule: vi.Nagm{Clip: inf}}, status: ok},
		{name: "negative workers", set: vi.Settings{Workers: -3}, msg: "Settings.Workers is -3"},
		{name: "1000 workers", set: vi.Settings{Workers: 1000}, status: ok, same: true},
		{name: "negative chunk size", set: vi.Settings{ChunkSize: -1}, msg: "Settings.ChunkSize is -1"},
		{name: "chunks of one subject", set: vi.Settings{ChunkSize: 1}, status: ok},
		{name: "window of one iteration", set: vi.Settings{Window: 1}, status: ok},
		{name: "window longer than the fit", set: vi.Settings{Window: 1 << 30}, status: ok},
		{name: "negative window", set: vi.Settings{Window: -50}, msg: "Settings.Window is -50"},
		{name: "NaN tolerance", set: vi.Settings{Tol: nan}, msg: "Settings.Tol is NaN"},
		{name: "infinite tolerance", set: vi.Settings{Tol: inf}, status: ok},
		{name: "negative tolerance", set: vi.Settings{Tol: -1}, msg: "Settings.Tol is -1"},
		{name: "negative patience", set: vi.Settings{Patience: -1}, msg: "Settings.Patience is -1"},
		{name: "negative refine means none", set: vi.Settings{Refine: -1}, status: ok},
		{name: "one convergence draw", set: vi.Settings{ConvergenceDraws: 1}, status: ok},
		{name: "one final draw", set: vi.Settings{FinalDraws: 1}, status: ok},
		{name: "negative final draws", set: vi.Settings{FinalDraws: -1}, msg: "Settings.FinalDraws is -1"},
		{name: "unknown init", set: vi.Settings{Init: vi.Init(9)}, msg: "Settings.Init is Init(9)"},
		{name: "negative time limit", set: vi.Settings{TimeLimit: -time.Second}, msg: "Settings.TimeLimit is -1s"},
		{name: "time limit of 1ns", set: vi.Settings{TimeLimit: time.Nanosecond}, status: []vi.Status{vi.TimeLimit}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			set := c.set
			set.Seed = 1
			set.MaxIter = 300
			var res *vi.Result
			var err error
			bounded(t, hangGuard, 1<<30, func() {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
						t.Errorf("PANIC: %v", p)
					}
				}()
				res, err = vi.Fit(context.Background(), m, set)
			})
			if c.msg != "" && (err == nil || !strings.Contains(err.Error(), c.msg)) {
				t.Errorf("error %v, want one containing %q", err, c.msg)
			}
			if c.status == nil {
				if res != nil || err == nil {
					t.Errorf("result %v, error %v; want an error and no result", res, err)
				}
				if strings.HasPrefix(c.msg, "Settings.") && !errors.Is(err, vi.ErrSettings) {
					t.Errorf("error %v does not wrap vi.ErrSettings", err)
				}
				return
			}
			checkResult(t, c.name, res, err, c.status...)
			if res.Status == vi.Diverged {
				var de *vi.DivergedError
				if !errors.As(err, &de) || de.Iter < 1 {
					t.Errorf("error %v, want a *vi.DivergedError with the iteration", err)
				}
			}
			if c.same && (firstDiff(res.Mu, ref.Mu) >= 0 || firstDiff(res.Factor, ref.Factor) >= 0 || res.LowerBound != ref.LowerBound) {
				t.Errorf("fit differs from the default settings'")
			}
		})
	}
}

// manyLevels returns a CSV table of twice as many subjects, one row each,
// as items of a crossed factor.
func manyLevels(items int) string {
	var b strings.Builder
	b.WriteString("id,item,t,y\n")
	for k := range 2 * items {
		fmt.Fprintf(&b, "s%d,i%d,%d,%d\n", k, k%items, k%3, k%4)
	}
	return b.String()
}
