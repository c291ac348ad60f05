// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// tokKind is the lexical class of a token.
type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokNumber
	tokTilde  // ~
	tokPlus   // +
	tokMinus  // -
	tokStar   // *
	tokColon  // :
	tokCaret  // ^
	tokSlash  // /
	tokLParen // (
	tokRParen // )
	tokBar    // |
	tokBar2   // ||
	tokComma  // ,
)

// token is one lexical unit of a formula. Pos is the 1-based position of
// its first character, counted in characters, not bytes; text is the token
// as written (without the backquotes of a quoted name).
type token struct {
	kind tokKind
	pos  int
	text string
}

// describe returns the token as it should appear in an error message.
func (t token) describe() string {
	if t.kind == tokEOF {
		return "end of formula"
	}
	return fmt.Sprintf("%q", t.text)
}

// isIdentStart and isIdentPart follow R's syntactic names: letters, digits,
// '.' and '_', not starting with a digit or '_'.
func isIdentStart(c byte) bool {
	return c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentPart(c byte) bool {
	return isIdentStart(c) || c == '_' || c >= '0' && c <= '9'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// runeAt returns the rune that starts at byte i of s.
func runeAt(s string, i int) rune {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

// lex splits s into tokens, ending with a tokEOF token. Any character that
// cannot start a token is a *SyntaxError.
func lex(s string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(s) {
		c := s[i]
		start, pos := i, charPos(s, i)
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '.' && i+1 < len(s) && isDigit(s[i+1]) || isDigit(c):
			i = scanNumber(s, i)
			if i < len(s) && isIdentPart(s[i]) {
				// "2x" is neither a number nor a name.
				j := i
				for j < len(s) && isIdentPart(s[j]) {
					j++
				}
				return nil, &SyntaxError{Pos: pos, Token: s[start:j], Msg: "malformed number"}
			}
			toks = append(toks, token{kind: tokNumber, pos: pos, text: s[start:i]})
			continue
		case isIdentStart(c) || c >= utf8.RuneSelf && unicode.IsLetter(runeAt(s, i)):
			// Letters beyond ASCII make names too, as in R in a UTF-8
			// locale (größe, âge).
			for i < len(s) {
				if isIdentPart(s[i]) {
					i++
					continue
				}
				if s[i] < utf8.RuneSelf {
					break
				}
				r, size := utf8.DecodeRuneInString(s[i:])
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					break
				}
				i += size
			}
			toks = append(toks, token{kind: tokIdent, pos: pos, text: s[start:i]})
			continue
		case c == '`':
			// R's quoted names allow any character but a backquote.
			j := i + 1
			for j < len(s) && s[j] != '`' {
				j++
			}
			if j == len(s) {
				return nil, &SyntaxError{Pos: pos, Token: "`", Msg: "unterminated quoted name"}
			}
			if j == i+1 {
				return nil, &SyntaxError{Pos: pos, Token: "``", Msg: "empty quoted name"}
			}
			toks = append(toks, token{kind: tokIdent, pos: pos, text: s[i+1 : j]})
			i = j + 1
			continue
		}
		kind := tokEOF
		width := 1
		switch c {
		case '~':
			kind = tokTilde
		case '+':
			kind = tokPlus
		case '-':
			kind = tokMinus
		case '*':
			kind = tokStar
		case ':':
			kind = tokColon
		case '^':
			kind = tokCaret
		case '/':
			kind = tokSlash
		case '(':
			kind = tokLParen
		case ')':
			kind = tokRParen
		case ',':
			kind = tokComma
		case '|':
			kind = tokBar
			if i+1 < len(s) && s[i+1] == '|' {
				kind, width = tokBar2, 2
			}
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			text := s[i : i+n]
			if r == utf8.RuneError && n <= 1 {
				text = fmt.Sprintf("\\x%02x", c)
			}
			msg := "unexpected character"
			switch c {
			case '%':
				msg = "%in% and other %op% operators are not supported"
			case '"', '\'':
				msg = "string literals are not supported"
			case '=', '<', '>', '!', '&':
				msg = "comparison and logical operators are not supported (derive the column first)"
			}
			return nil, &SyntaxError{Pos: pos, Token: text, Msg: msg}
		}
		toks = append(toks, token{kind: kind, pos: pos, text: s[i : i+width]})
		i += width
	}
	toks = append(toks, token{kind: tokEOF, pos: charPos(s, len(s))})
	return toks, nil
}

// charPos returns the 1-based position in characters of byte i of s,
// which error messages give.
func charPos(s string, i int) int { return utf8.RuneCountInString(s[:i]) + 1 }

// scanNumber returns the end of the decimal number starting at s[i]:
// digits, an optional fraction and an optional exponent.
func scanNumber(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	return i
}
