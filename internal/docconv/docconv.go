// Package docconv converts uploaded documents (DOCX, plain text, markdown,
// CSV, HTML) to HTML, so that the HTML-to-markdown pipeline can handle them
// like web pages.
//
// Detect identifies a document by magic bytes, then by file extension, then
// by content type. PDFs are detected but not converted here: they go to
// pdfparse. Markdown is best passed through unchanged: use Text to get the
// decoded source when Detect returns KindMarkdown (ToHTML still accepts it
// and returns it inside <pre>, which loses nothing but renders as code).
package docconv

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"path"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// Kind is a document type.
type Kind string

// Document kinds returned by Detect.
const (
	KindPDF         Kind = "pdf"
	KindDOCX        Kind = "docx"
	KindHTML        Kind = "html"
	KindText        Kind = "text"
	KindMarkdown    Kind = "markdown"
	KindCSV         Kind = "csv"
	KindUnsupported Kind = "unsupported"
)

// Errors returned by ToHTML (wrapped with details).
var (
	// ErrUnsupportedType means the document type cannot be converted; the
	// message names the extension (or content type).
	ErrUnsupportedType = errors.New("docconv: unsupported file type")
	// ErrPDF means the document is a PDF, which pdfparse handles.
	ErrPDF = errors.New("docconv: PDF documents are parsed by pdfparse")
	// ErrCorrupt means the document could not be read (bad zip or XML).
	ErrCorrupt = errors.New("docconv: corrupt document")
	// ErrTooLarge means a compressed document expands beyond the limits.
	ErrTooLarge = errors.New("docconv: document expands beyond the size limit")
)

// Limits on compressed containers (zip bombs).
const (
	MaxUncompressed = 50 << 20 // bytes, all entries read
	MaxZipEntries   = 10_000
)

// Detect identifies a document: magic bytes first, then the filename's
// extension, then the content type.
func Detect(data []byte, filename, contentType string) Kind {
	ext := strings.ToLower(path.Ext(filename))
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return KindPDF
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		if zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data))); err == nil {
			for _, f := range zr.File {
				if f.Name == "word/document.xml" {
					return KindDOCX
				}
			}
		}
		if ext == ".docx" {
			return KindDOCX // a broken docx: ToHTML reports it as corrupt
		}
		return KindUnsupported
	case bytes.HasPrefix(data, []byte("\xd0\xcf\x11\xe0")), bytes.HasPrefix(data, []byte(`{\rtf`)):
		return KindUnsupported // OLE (doc, xls, ppt) and RTF
	case looksHTML(data):
		return KindHTML
	}
	switch ext {
	case ".pdf":
		return KindPDF
	case ".docx":
		return KindDOCX
	case ".html", ".htm", ".xhtml":
		return KindHTML
	case ".md", ".markdown":
		return KindMarkdown
	case ".txt", ".text":
		return KindText
	case ".csv", ".tsv":
		return KindCSV
	case "":
	default:
		return KindUnsupported
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "application/pdf":
		return KindPDF
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		return KindDOCX
	case "text/html", "application/xhtml+xml":
		return KindHTML
	case "text/markdown", "text/x-markdown":
		return KindMarkdown
	case "text/csv", "text/tab-separated-values":
		return KindCSV
	case "text/plain":
		return KindText
	case "", "application/octet-stream":
		if len(data) > 0 && !bytes.ContainsRune(data[:min(len(data), 8192)], 0) {
			return KindText
		}
	}
	return KindUnsupported
}

// looksHTML reports whether data starts (after a BOM and spaces) like an
// HTML or XHTML document.
func looksHTML(data []byte) bool {
	head := bytes.TrimLeft(bytes.TrimPrefix(data[:min(len(data), 1024)], []byte("\xef\xbb\xbf")), " \t\r\n")
	lower := bytes.ToLower(head)
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body"} {
		if bytes.HasPrefix(lower, []byte(p)) {
			return true
		}
	}
	return bytes.HasPrefix(lower, []byte("<?xml")) && bytes.Contains(lower, []byte("xhtml"))
}

// ToHTML converts a document to HTML. See the package documentation.
func ToHTML(ctx context.Context, data []byte, filename, contentType string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	switch kind := Detect(data, filename, contentType); kind {
	case KindPDF:
		return "", ErrPDF
	case KindDOCX:
		return docxToHTML(ctx, data)
	case KindHTML:
		return Text(data), nil
	case KindText:
		return textToHTML(Text(data)), nil
	case KindMarkdown:
		return "<pre>" + html.EscapeString(Text(data)) + "</pre>", nil
	case KindCSV:
		return csvToHTML(Text(data), strings.EqualFold(path.Ext(filename), ".tsv"))
	default:
		what := strings.ToLower(path.Ext(filename))
		if what == "" {
			what = contentType
		}
		if what == "" {
			what = "unknown"
		}
		return "", fmt.Errorf("%w: %s", ErrUnsupportedType, what)
	}
}

// Text decodes a text document to UTF-8: BOMs are removed, UTF-16 with a
// BOM is decoded, and invalid UTF-8 is read as Windows-1252.
func Text(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\xef\xbb\xbf")):
		data = data[3:]
	case bytes.HasPrefix(data, []byte("\xff\xfe")), bytes.HasPrefix(data, []byte("\xfe\xff")):
		be := data[0] == 0xfe
		data = data[2:]
		u := make([]uint16, len(data)/2)
		for i := range u {
			if be {
				u[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
			} else {
				u[i] = uint16(data[2*i+1])<<8 | uint16(data[2*i])
			}
		}
		return string(utf16.Decode(u))
	}
	if utf8.Valid(data) {
		return string(data)
	}
	out, err := charmap.Windows1252.NewDecoder().Bytes(data)
	if err != nil {
		return strings.ToValidUTF8(string(data), "\ufffd")
	}
	return string(out)
}

// textToHTML turns plain text into paragraphs (blank-line separated) with
// line breaks kept.
func textToHTML(text string) string {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	var b strings.Builder
	b.WriteString("<html><body>\n")
	for _, para := range strings.Split(text, "\n\n") {
		para = strings.Trim(para, "\n")
		if strings.TrimSpace(para) == "" {
			continue
		}
		lines := strings.Split(para, "\n")
		for i, l := range lines {
			lines[i] = html.EscapeString(l)
		}
		b.WriteString("<p>" + strings.Join(lines, "<br>\n") + "</p>\n")
	}
	b.WriteString("</body></html>")
	return b.String()
}

// csvToHTML renders CSV as an HTML table whose first record is the header.
// The delimiter is sniffed from the first line (comma, semicolon or tab).
func csvToHTML(text string, tsv bool) (string, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.Comma = sniffDelimiter(text)
	if tsv {
		r.Comma = '\t'
	}
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	var b strings.Builder
	b.WriteString("<html><body>\n<table>\n")
	for n := 0; ; n++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("%w: csv: %v", ErrCorrupt, err)
		}
		cell := "td"
		if n == 0 {
			b.WriteString("<thead>\n")
			cell = "th"
		}
		b.WriteString("<tr>")
		for _, f := range rec {
			b.WriteString("<" + cell + ">" + strings.ReplaceAll(html.EscapeString(f), "\n", "<br>") + "</" + cell + ">")
		}
		b.WriteString("</tr>\n")
		if n == 0 {
			b.WriteString("</thead>\n<tbody>\n")
		}
	}
	b.WriteString("</tbody>\n</table>\n</body></html>")
	return b.String(), nil
}

// sniffDelimiter picks the most frequent of , ; and tab outside quotes in
// the first line.
func sniffDelimiter(text string) rune {
	counts := map[rune]int{}
	quoted := false
	for _, c := range text {
		if c == '"' {
			quoted = !quoted
		}
		if c == '\n' && !quoted {
			break
		}
		if !quoted && (c == ',' || c == ';' || c == '\t') {
			counts[c]++
		}
	}
	best := ','
	for _, c := range []rune{';', '\t'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best
}
