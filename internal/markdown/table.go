package markdown

import (
	"strings"

	"github.com/firegate/firegate/internal/htmlattr"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// tableRows returns the rows of a table (direct, or inside thead/tbody/tfoot)
// and whether the first row is a header row.
func tableRows(t *html.Node) (rows []*html.Node, caption *html.Node, header bool) {
	for ch := t.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type != html.ElementNode {
			continue
		}
		switch ch.DataAtom {
		case atom.Caption:
			caption = ch
		case atom.Tr:
			rows = append(rows, ch)
		case atom.Thead, atom.Tbody, atom.Tfoot:
			for tr := ch.FirstChild; tr != nil; tr = tr.NextSibling {
				if tr.Type == html.ElementNode && tr.DataAtom == atom.Tr {
					if len(rows) == 0 && ch.DataAtom == atom.Thead {
						header = true
					}
					rows = append(rows, tr)
				}
			}
		}
	}
	if !header && len(rows) > 0 {
		header = true
		for c := rows[0].FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.DataAtom == atom.Td {
				header = false
				break
			}
		}
	}
	return rows, caption, header
}

func cells(tr *html.Node) []*html.Node {
	var cs []*html.Node
	for c := tr.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (c.DataAtom == atom.Td || c.DataAtom == atom.Th) {
			cs = append(cs, c)
		}
	}
	return cs
}

// isLayoutTable reports whether a table arranges blocks rather than data:
// a single column, or a table nested in a cell.
func isLayoutTable(rows []*html.Node) bool {
	maxCols := 0
	for _, r := range rows {
		cs := cells(r)
		if len(cs) > maxCols {
			maxCols = len(cs)
		}
		for _, c := range cs {
			for d := c.FirstChild; d != nil; d = d.NextSibling {
				if d.Type == html.ElementNode && (d.DataAtom == atom.Table || d.DataAtom == atom.Blockquote) {
					return true
				}
			}
		}
	}
	return maxCols <= 1
}

// Bounds that keep a table's markdown linear in its HTML. Padding every
// row to the widest made one wide row (3,000 cells spanning 32 columns
// each) and 1,000 one-cell rows, 80 KB of HTML, into 275 MB of markdown.
const (
	// maxSpanColumns is the width past which a row's colspans add no
	// empty cells.
	maxSpanColumns = 1000
	// maxPaddedCells is the largest rows-times-columns grid whose short
	// rows are padded with empty cells.
	maxPaddedCells = 100_000
)

func (c *converter) table(t *html.Node, depth int) {
	rows, caption, header := tableRows(t)
	if c.inline > 0 || len(rows) == 0 || isLayoutTable(rows) {
		c.block()
		c.children(t, depth)
		c.block()
		return
	}
	var grid [][]string
	cols := 0
	for _, r := range rows {
		var line []string
		for _, cell := range cells(r) {
			line = append(line, c.cell(cell, depth+2))
			span := atoiSmall(htmlattr.Get(cell, "colspan"))
			for i := 1; i < span && i < 32 && len(line) < maxSpanColumns; i++ {
				line = append(line, "")
			}
		}
		if len(line) > cols {
			cols = len(line)
		}
		grid = append(grid, line)
	}
	if cols == 0 {
		return
	}
	c.block()
	if caption != nil {
		c.children(caption, depth+1)
		c.block()
	}
	if !header {
		// GFM requires a header row: use an empty one.
		grid = append([][]string{make([]string, cols)}, grid...)
	}
	// A short row is padded to the widest one, unless that would make the
	// output grow with rows times columns: GFM fills a short row's missing
	// cells itself, so only the header row must be as wide as the table.
	pad := cols*len(grid) <= maxPaddedCells
	for i, line := range grid {
		c.beforeContent()
		c.out = append(c.out, '|')
		for j := 0; j < cols; j++ {
			if !pad && i > 0 && j >= len(line) {
				break
			}
			v := ""
			if j < len(line) {
				v = line[j]
			}
			c.out = append(c.out, ' ')
			c.out = append(c.out, v...)
			c.out = append(c.out, " |"...)
		}
		c.lineBreak()
		if i == 0 {
			c.beforeContent()
			c.out = append(c.out, '|')
			for j := 0; j < cols; j++ {
				c.out = append(c.out, " --- |"...)
			}
			c.lineBreak()
		}
	}
	c.block()
}

// cell renders the content of a table cell on one line.
func (c *converter) cell(n *html.Node, depth int) string {
	sub := converter{opts: c.opts, inline: 1, inLink: c.inLink}
	sub.children(n, depth)
	s := strings.TrimSpace(string(sub.out))
	if strings.IndexByte(s, '|') >= 0 {
		s = escapePipes(s)
	}
	return s
}

// escapePipes escapes unescaped '|' characters.
func escapePipes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '|' && (i == 0 || s[i-1] != '\\') {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func atoiSmall(s string) int {
	v := 0
	for i := 0; i < len(s) && i < 4; i++ {
		if s[i] < '0' || s[i] > '9' {
			break
		}
		v = v*10 + int(s[i]-'0')
	}
	return v
}
