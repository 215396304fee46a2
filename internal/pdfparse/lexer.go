package pdfparse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Content stream syntax limits besides Limits.MaxTokenBytes.
const (
	maxNesting       = 32      // arrays and dictionaries inside each other
	maxArrayElements = 1 << 16 // elements kept per array; more are read and dropped
	maxOperands      = 64      // operands kept before an operator; more are dropped
)

// errSyntax marks malformed content; the page is kept as partial.
var errSyntax = errors.New("pdfparse: content stream syntax")

// objKind is the type of a content stream object.
type objKind uint8

// Object kinds.
const (
	kNull objKind = iota
	kBool
	kNum
	kStr
	kName
	kArray
	kDict
	kOp     // an operator keyword
	kEndArr // ] (internal)
	kEndDic // >> (internal)
)

// object is one operand or operator of a content stream.
type object struct {
	kind objKind
	num  float64
	s    string   // string bytes, name (without /) or operator
	arr  []object // array elements; dictionary keys and values alternating
}

// Float64 returns a number operand, 0 for other kinds.
func (o object) Float64() float64 {
	if o.kind == kNum {
		return o.num
	}
	return 0
}

// Name returns a name operand, "" for other kinds.
func (o object) Name() string {
	if o.kind == kName {
		return o.s
	}
	return ""
}

// lexer reads the objects of a content stream. Every read goes through
// the stream's countReader, so a long token is bounded by the budget and
// the deadline while it is read, not after.
type lexer struct {
	r   *bufio.Reader
	max int64 // token cap
	buf []byte
}

// newLexer reads from r with the token cap max.
func newLexer(r io.Reader, max int64) *lexer {
	return &lexer{r: bufio.NewReaderSize(r, 8<<10), max: max}
}

// isSpace reports PDF white-space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

// isDelim reports PDF delimiters.
func isDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// tooLong is the error of a token over the cap.
func (l *lexer) tooLong(what string) error {
	return fmt.Errorf("%w: a content stream %s longer than %d bytes", ErrTooLarge, what, l.max)
}

// next returns the next object; io.EOF at the end of the stream.
func (l *lexer) next() (object, error) {
	return l.object(0)
}

// object reads one object at nesting depth.
func (l *lexer) object(depth int) (object, error) {
	c, err := l.skipSpace()
	if err != nil {
		return object{}, err
	}
	switch c {
	case '(':
		s, err := l.literal()
		return object{kind: kStr, s: s}, err
	case '<':
		n, err := l.r.ReadByte()
		if err != nil {
			return object{}, errSyntax
		}
		if n == '<' {
			return l.container(depth, kDict, kEndDic)
		}
		_ = l.r.UnreadByte()
		s, err := l.hex()
		return object{kind: kStr, s: s}, err
	case '>':
		if n, err := l.r.ReadByte(); err == nil && n != '>' {
			_ = l.r.UnreadByte()
		}
		return object{kind: kEndDic}, nil
	case '[':
		return l.container(depth, kArray, kEndArr)
	case ']':
		return object{kind: kEndArr}, nil
	case '/':
		s, err := l.regular()
		if err != nil {
			return object{}, err
		}
		return object{kind: kName, s: decodeName(s)}, nil
	case ')', '{', '}':
		return object{kind: kOp, s: string(c)}, nil
	}
	_ = l.r.UnreadByte()
	s, err := l.regular()
	if err != nil {
		return object{}, err
	}
	if c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9' {
		if f, perr := strconv.ParseFloat(s, 64); perr == nil {
			return object{kind: kNum, num: f}, nil
		}
		if f, ok := looseNumber(s); ok {
			return object{kind: kNum, num: f}, nil
		}
	}
	switch s {
	case "true", "false":
		return object{kind: kBool, s: s}, nil
	case "null":
		return object{kind: kNull}, nil
	}
	return object{kind: kOp, s: s}, nil
}

// container reads array or dictionary elements up to the end marker.
func (l *lexer) container(depth int, kind, end objKind) (object, error) {
	if depth >= maxNesting {
		return object{}, fmt.Errorf("%w: nesting deeper than %d", errSyntax, maxNesting)
	}
	o := object{kind: kind}
	for {
		e, err := l.object(depth + 1)
		if errors.Is(err, io.EOF) {
			return o, nil // unterminated at the end of the stream
		}
		if err != nil {
			return o, err
		}
		if e.kind == end {
			return o, nil
		}
		if e.kind == kEndArr || e.kind == kEndDic {
			continue
		}
		if len(o.arr) < maxArrayElements {
			o.arr = append(o.arr, e)
		}
	}
}

// skipSpace skips white-space and comments and returns the next byte.
func (l *lexer) skipSpace() (byte, error) {
	for {
		c, err := l.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if isSpace(c) {
			continue
		}
		if c != '%' {
			return c, nil
		}
		for {
			c, err = l.r.ReadByte()
			if err != nil {
				return 0, err
			}
			if c == '\n' || c == '\r' {
				break
			}
		}
	}
}

// regular reads a run of regular characters.
func (l *lexer) regular() (string, error) {
	l.buf = l.buf[:0]
	for {
		c, err := l.r.ReadByte()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		if isSpace(c) || isDelim(c) {
			_ = l.r.UnreadByte()
			break
		}
		if int64(len(l.buf)) >= l.max {
			return "", l.tooLong("name or keyword")
		}
		l.buf = append(l.buf, c)
	}
	return string(l.buf), nil
}

// literal reads a literal string after its opening parenthesis.
func (l *lexer) literal() (string, error) {
	l.buf = l.buf[:0]
	depth := 1
	for {
		c, err := l.r.ReadByte()
		if errors.Is(err, io.EOF) {
			return string(l.buf), nil
		}
		if err != nil {
			return "", err
		}
		if int64(len(l.buf)) >= l.max {
			return "", l.tooLong("string")
		}
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return string(l.buf), nil
			}
		case '\r':
			if n, err := l.r.ReadByte(); err == nil && n != '\n' {
				_ = l.r.UnreadByte()
			}
			c = '\n'
		case '\\':
			c, err = l.r.ReadByte()
			if err != nil {
				return string(l.buf), nil
			}
			switch c {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if n, err := l.r.ReadByte(); err == nil && n != '\n' {
					_ = l.r.UnreadByte()
				}
				continue
			case '\n':
				continue
			default:
				if c >= '0' && c <= '7' {
					v := int(c - '0')
					for range 2 {
						n, err := l.r.ReadByte()
						if err != nil {
							break
						}
						if n < '0' || n > '7' {
							_ = l.r.UnreadByte()
							break
						}
						v = v*8 + int(n-'0')
					}
					c = byte(v)
				}
			}
		}
		l.buf = append(l.buf, c)
	}
}

// hex reads a hexadecimal string after its opening angle bracket.
func (l *lexer) hex() (string, error) {
	l.buf = l.buf[:0]
	half, have := byte(0), false
	for {
		c, err := l.r.ReadByte()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		if c == '>' {
			break
		}
		v, ok := unhex(c)
		if !ok {
			continue
		}
		if !have {
			half, have = v, true
			continue
		}
		if int64(len(l.buf)) >= l.max {
			return "", l.tooLong("string")
		}
		l.buf = append(l.buf, half<<4|v)
		have = false
	}
	if have {
		l.buf = append(l.buf, half<<4)
	}
	return string(l.buf), nil
}

// unhex decodes one hexadecimal digit.
func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// decodeName resolves #xx escapes in a name.
func decodeName(s string) string {
	if !bytes.Contains([]byte(s), []byte("#")) {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && i+2 < len(s) {
			h, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				out = append(out, h<<4|lo)
				i += 2
				continue
			}
		}
		out = append(out, s[i])
	}
	return string(out)
}

// looseNumber reads numbers writers get slightly wrong ("--5", "1.2.3",
// "5-"): the longest valid prefix after the signs, negative when any sign
// is a minus.
func looseNumber(s string) (float64, bool) {
	neg := false
	for len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = neg || s[0] == '-'
		s = s[1:]
	}
	end, dot := 0, false
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.' && !dot) {
		dot = dot || s[end] == '.'
		end++
	}
	if end == 0 || s[:end] == "." {
		return 0, false
	}
	f, err := strconv.ParseFloat(s[:end], 64)
	if err != nil {
		return 0, false
	}
	if neg {
		f = -f
	}
	return f, true
}

// skipInlineImage skips the dictionary and data of an inline image, after
// its BI operator, up to and including EI.
func (l *lexer) skipInlineImage() error {
	for {
		o, err := l.object(0)
		if err != nil {
			return err
		}
		if o.kind == kOp && o.s == "ID" {
			break
		}
	}
	// One white-space byte follows ID; the data runs to white-space, EI,
	// then white-space or a delimiter (or the end of the stream).
	if _, err := l.r.ReadByte(); err != nil {
		return err
	}
	a, b, c := byte(' '), byte('x'), byte('x') // the last three bytes read
	for {
		d, err := l.r.ReadByte()
		if errors.Is(err, io.EOF) && isSpace(a) && b == 'E' && c == 'I' {
			return nil
		}
		if err != nil {
			return err
		}
		if isSpace(a) && b == 'E' && c == 'I' && (isSpace(d) || isDelim(d)) {
			_ = l.r.UnreadByte()
			return nil
		}
		a, b, c = b, c, d
	}
}
