package extracteval

import (
	"strings"
)

// PlainText removes markdown markup from md, keeping the words a reader
// sees: heading and list markers, emphasis, code fences, table pipes and
// separator rows, blockquote markers and backslash escapes go; a link keeps
// its text and loses its target; an image goes, alt text included.
func PlainText(md string) string {
	var b strings.Builder
	b.Grow(len(md))
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			inFence = !inFence
			b.WriteByte('\n')
			continue
		}
		if inFence {
			b.WriteString(line)
			b.WriteByte('\n')
			continue
		}
		t = stripLinePrefix(t)
		if isTableRule(t) || isThematicBreak(t) {
			b.WriteByte('\n')
			continue
		}
		if strings.HasPrefix(t, "|") {
			t = strings.ReplaceAll(strings.Trim(t, "|"), "|", " ")
		}
		b.WriteString(inline(t))
		b.WriteByte('\n')
	}
	return b.String()
}

// stripLinePrefix removes blockquote, heading and list markers.
func stripLinePrefix(t string) string {
	for {
		switch {
		case strings.HasPrefix(t, ">"):
			t = strings.TrimSpace(t[1:])
			continue
		case strings.HasPrefix(t, "#"):
			i := strings.IndexFunc(t, func(r rune) bool { return r != '#' })
			if i > 0 && i <= 6 && (t[i] == ' ') {
				t = strings.TrimSpace(t[i:])
			}
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "* ") || strings.HasPrefix(t, "+ "):
			t = strings.TrimSpace(t[2:])
			if strings.HasPrefix(t, "[ ] ") || strings.HasPrefix(t, "[x] ") {
				t = t[4:]
			}
			continue
		default:
			i := 0
			for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
				i++
			}
			if i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && t[i+1] == ' ' {
				t = strings.TrimSpace(t[i+2:])
				continue
			}
		}
		return t
	}
}

func isTableRule(t string) bool {
	if !strings.Contains(t, "-") || !strings.Contains(t, "|") {
		return false
	}
	return strings.Trim(t, "|-: ") == ""
}

func isThematicBreak(t string) bool {
	if len(t) < 3 {
		return false
	}
	c := t[0]
	if c != '-' && c != '*' && c != '_' {
		return false
	}
	return strings.Trim(t, string(c)+" ") == ""
}

// inline removes inline markup: links and images keep their text, code
// spans their content, emphasis markers and escapes are dropped.
func inline(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s) && isPunct(s[i+1]):
			b.WriteByte(s[i+1])
			i += 2
		case c == '!' && i+1 < len(s) && s[i+1] == '[':
			// An image is not text a reader sees: it goes with its alt.
			end := matchBracket(s, i+1)
			if end > 0 && end+1 < len(s) && s[end+1] == '(' {
				if close := strings.IndexByte(s[end+1:], ')'); close > 0 {
					b.WriteByte(' ')
					i = end + 1 + close + 1
					continue
				}
			}
			b.WriteByte(c)
			i++
		case c == '[':
			end := matchBracket(s, i)
			if end > 0 && end+1 < len(s) && s[end+1] == '(' {
				if close := strings.IndexByte(s[end+1:], ')'); close > 0 {
					b.WriteString(inline(s[i+1 : end]))
					b.WriteByte(' ')
					i = end + 1 + close + 1
					continue
				}
			}
			b.WriteByte(c)
			i++
		case c == '*' || c == '`' || c == '~':
			b.WriteByte(' ')
			i++
		case c == '_' && (i == 0 || i+1 == len(s) || !isWordByte(s[i-1]) || !isWordByte(s[i+1])):
			b.WriteByte(' ')
			i++
		case c == '<' && strings.HasPrefix(s[i:], "<br"):
			b.WriteByte(' ')
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}

func matchBracket(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

func isPunct(c byte) bool {
	return strings.IndexByte("\\`*_{}[]()#+-.!|<>~\"'$%&,/:;=?@^", c) >= 0
}

func isWordByte(c byte) bool {
	return c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
