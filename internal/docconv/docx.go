package docconv

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
)

// Namespaces of WordprocessingML.
const (
	nsW   = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsRel = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
)

// docxParts are the parts of a .docx the converter reads.
type docxParts struct {
	document, rels, styles, numbering []byte
}

// readDocx reads the needed zip entries, bounding entry count and
// decompressed size.
func readDocx(data []byte) (*docxParts, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: docx: %v", ErrCorrupt, err)
	}
	if len(zr.File) > MaxZipEntries {
		return nil, fmt.Errorf("%w: %d zip entries", ErrTooLarge, len(zr.File))
	}
	parts := &docxParts{}
	want := map[string]*[]byte{
		"word/document.xml":            &parts.document,
		"word/_rels/document.xml.rels": &parts.rels,
		"word/styles.xml":              &parts.styles,
		"word/numbering.xml":           &parts.numbering,
	}
	budget := int64(MaxUncompressed)
	for _, f := range zr.File {
		dst, ok := want[f.Name]
		if !ok {
			continue
		}
		if f.UncompressedSize64 > uint64(budget) {
			return nil, fmt.Errorf("%w: %s is %d bytes", ErrTooLarge, f.Name, f.UncompressedSize64)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%w: docx %s: %v", ErrCorrupt, f.Name, err)
		}
		b, err := io.ReadAll(io.LimitReader(rc, budget+1))
		_ = rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: docx %s: %v", ErrCorrupt, f.Name, err)
		}
		if int64(len(b)) > budget {
			return nil, fmt.Errorf("%w: %s", ErrTooLarge, f.Name)
		}
		budget -= int64(len(b))
		*dst = b
	}
	if parts.document == nil {
		return nil, fmt.Errorf("%w: docx without word/document.xml", ErrCorrupt)
	}
	return parts, nil
}

// attr returns the value of the attribute with the local name (any
// namespace).
func attr(e xml.StartElement, local string) string {
	for _, a := range e.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// on reports whether a toggle property (w:b, w:i) is on: present without
// val, or with a true val.
func on(e xml.StartElement) bool {
	v := attr(e, "val")
	return v == "" || v == "1" || v == "true" || v == "on"
}

// relTargets maps relationship ids to external targets (hyperlinks).
func relTargets(data []byte) map[string]string {
	out := map[string]string{}
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if err != nil {
			return out
		}
		if e, ok := tok.(xml.StartElement); ok && e.Name.Local == "Relationship" {
			out[attr(e, "Id")] = attr(e, "Target")
		}
	}
}

// headingStyles maps paragraph style ids to heading levels 1..6, from the
// style names ("heading 1", "Title") or ids ("Heading1").
func headingStyles(data []byte) map[string]int {
	out := map[string]int{}
	level := func(s string) int {
		s = strings.ToLower(strings.ReplaceAll(s, " ", ""))
		switch {
		case s == "title":
			return 1
		case s == "subtitle":
			return 2
		case strings.HasPrefix(s, "heading") && len(s) == len("heading")+1 && s[7] >= '1' && s[7] <= '6':
			return int(s[7] - '0')
		}
		return 0
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	id := ""
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		if e, ok := tok.(xml.StartElement); ok {
			switch e.Name.Local {
			case "style":
				id = attr(e, "styleId")
				if l := level(id); l > 0 {
					out[id] = l
				}
			case "name":
				if l := level(attr(e, "val")); l > 0 && id != "" {
					out[id] = l
				}
			}
		}
	}
	return out
}

// orderedLists reports, per "numId/ilvl", whether a list level is ordered.
func orderedLists(data []byte) map[string]bool {
	abstract := map[string]map[string]bool{} // abstractNumId -> ilvl -> ordered
	numToAbs := map[string]string{}
	d := xml.NewDecoder(bytes.NewReader(data))
	var absID, lvl, numID string
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		e, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch e.Name.Local {
		case "abstractNum":
			absID, numID = attr(e, "abstractNumId"), ""
			abstract[absID] = map[string]bool{}
		case "lvl":
			lvl = attr(e, "ilvl")
		case "numFmt":
			if m := abstract[absID]; m != nil && numID == "" {
				f := attr(e, "val")
				m[lvl] = f != "bullet" && f != "none" && f != ""
			}
		case "num":
			numID = attr(e, "numId")
		case "abstractNumId":
			if numID != "" {
				numToAbs[numID] = attr(e, "val")
			}
		}
	}
	out := map[string]bool{}
	for num, abs := range numToAbs {
		for l, ordered := range abstract[abs] {
			out[num+"/"+l] = ordered
		}
	}
	return out
}

// docxConv holds the conversion state of one document.
type docxConv struct {
	out      strings.Builder
	rels     map[string]string
	headings map[string]int
	ordered  map[string]bool

	lists []string // open list tags, one per level

	// current paragraph
	style   string
	numID   string
	ilvl    int
	outline int // outline level + 1, 0 when none
	para    strings.Builder

	// current run
	bold, italic bool
	inText       bool
	run          strings.Builder

	link      string // href of the open hyperlink
	linkText  strings.Builder
	inLink    bool
	cellDepth int
	cellParas []int // paragraphs written in each open cell
	skip      int   // depth inside deleted text or field instructions
}

// docxToHTML converts a .docx document to HTML.
func docxToHTML(ctx context.Context, data []byte) (string, error) {
	parts, err := readDocx(data)
	if err != nil {
		return "", err
	}
	c := &docxConv{
		rels:     relTargets(parts.rels),
		headings: headingStyles(parts.styles),
		ordered:  orderedLists(parts.numbering),
	}
	c.out.WriteString("<html><body>\n")
	d := xml.NewDecoder(bytes.NewReader(parts.document))
	for n := 0; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%w: docx xml: %v", ErrCorrupt, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			c.start(t)
		case xml.EndElement:
			c.end(t)
		case xml.CharData:
			if c.skip == 0 && c.inText {
				c.run.WriteString(string(t))
			}
		}
	}
	c.closeLists(0)
	c.out.WriteString("</body></html>")
	return c.out.String(), nil
}

// start handles an opening tag of document.xml.
func (c *docxConv) start(e xml.StartElement) {
	if e.Name.Space != nsW && e.Name.Space != "" {
		return
	}
	if c.skip > 0 {
		if e.Name.Local == "del" || e.Name.Local == "instrText" || e.Name.Local == "delText" {
			c.skip++
		}
		return
	}
	switch e.Name.Local {
	case "del", "instrText", "delText":
		c.skip = 1
	case "p":
		c.style, c.numID, c.ilvl, c.outline = "", "", 0, 0
		c.para.Reset()
	case "pStyle":
		c.style = attr(e, "val")
	case "numId":
		c.numID = attr(e, "val")
	case "ilvl":
		c.ilvl, _ = strconv.Atoi(attr(e, "val"))
		c.ilvl = min(max(c.ilvl, 0), 8)
	case "outlineLvl":
		if l, err := strconv.Atoi(attr(e, "val")); err == nil && l >= 0 && l < 6 {
			c.outline = l + 1
		}
	case "r":
		c.bold, c.italic = false, false
		c.run.Reset()
	case "b":
		c.bold = on(e)
	case "i":
		c.italic = on(e)
	case "t":
		c.inText = true
	case "tab":
		c.run.WriteString(" ")
	case "br", "cr":
		c.run.WriteString("\n")
	case "hyperlink":
		c.inLink = true
		c.linkText.Reset()
		c.link = c.rels[attrNS(e, nsRel, "id")]
		if a := attr(e, "anchor"); c.link == "" && a != "" {
			c.link = "#" + a
		}
	case "tbl":
		if c.cellDepth == 0 {
			c.closeLists(0)
		}
		c.write("<table>\n")
	case "tr":
		c.write("<tr>")
	case "tc":
		c.write("<td>")
		c.cellDepth++
		c.cellParas = append(c.cellParas, 0)
	}
}

// attrNS returns the value of the attribute in namespace space.
func attrNS(e xml.StartElement, space, local string) string {
	for _, a := range e.Attr {
		if a.Name.Space == space && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// write appends HTML to the document (or to the open table cell, which is
// the same stream).
func (c *docxConv) write(s string) { c.out.WriteString(s) }

// end handles a closing tag of document.xml.
func (c *docxConv) end(e xml.EndElement) {
	if e.Name.Space != nsW && e.Name.Space != "" {
		return
	}
	if c.skip > 0 {
		if e.Name.Local == "del" || e.Name.Local == "instrText" || e.Name.Local == "delText" {
			c.skip--
		}
		return
	}
	switch e.Name.Local {
	case "t":
		c.inText = false
	case "r":
		text := html.EscapeString(c.run.String())
		text = strings.ReplaceAll(text, "\n", "<br>")
		if strings.TrimSpace(text) != "" {
			if c.italic {
				text = "<em>" + text + "</em>"
			}
			if c.bold {
				text = "<strong>" + text + "</strong>"
			}
		}
		if c.inLink {
			c.linkText.WriteString(text)
		} else {
			c.para.WriteString(text)
		}
		c.run.Reset()
	case "hyperlink":
		c.inLink = false
		if c.link != "" {
			c.para.WriteString(`<a href="` + html.EscapeString(c.link) + `">` + c.linkText.String() + "</a>")
		} else {
			c.para.WriteString(c.linkText.String())
		}
	case "p":
		c.endPara()
	case "tc":
		c.write("</td>")
		c.cellDepth--
		c.cellParas = c.cellParas[:len(c.cellParas)-1]
	case "tr":
		c.write("</tr>\n")
	case "tbl":
		c.write("</table>\n")
	}
}

// endPara writes the finished paragraph as a heading, list item, cell line
// or paragraph.
func (c *docxConv) endPara() {
	text := strings.TrimSpace(c.para.String())
	if c.cellDepth > 0 {
		if text == "" {
			return
		}
		n := &c.cellParas[len(c.cellParas)-1]
		if *n > 0 {
			c.write("<br>")
		}
		*n++
		c.write(text)
		return
	}
	level := c.headings[c.style]
	if level == 0 {
		level = c.outline
	}
	if c.numID != "" && c.numID != "0" && level == 0 {
		tag := "ul"
		if c.ordered[c.numID+"/"+strconv.Itoa(c.ilvl)] {
			tag = "ol"
		}
		c.listItem(c.ilvl, tag, text)
		return
	}
	c.closeLists(0)
	if text == "" {
		return
	}
	if level > 0 {
		h := "h" + strconv.Itoa(level)
		c.write("<" + h + ">" + text + "</" + h + ">\n")
		return
	}
	c.write("<p>" + text + "</p>\n")
}

// listItem opens or continues nested lists so that the item sits at level.
func (c *docxConv) listItem(level int, tag, text string) {
	c.closeLists(level + 1)
	if len(c.lists) == level+1 && c.lists[level] != tag {
		c.closeLists(level)
	}
	if len(c.lists) == level+1 {
		c.write("</li>\n<li>" + text)
		return
	}
	for len(c.lists) < level+1 {
		c.lists = append(c.lists, tag)
		c.write("<" + tag + ">\n<li>")
	}
	c.write(text)
}

// closeLists closes open lists deeper than depth levels.
func (c *docxConv) closeLists(depth int) {
	for len(c.lists) > depth {
		n := len(c.lists) - 1
		c.write("</li>\n</" + c.lists[n] + ">\n")
		c.lists = c.lists[:n]
	}
}
