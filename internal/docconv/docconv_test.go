package docconv

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// makeZip builds a zip archive from name/content pairs.
func makeZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const docxBody = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">
<w:body>
<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Quarterly &amp; Report</w:t></w:r></w:p>
<w:p><w:pPr><w:pStyle w:val="Kop2"/></w:pPr><w:r><w:t>Overview</w:t></w:r></w:p>
<w:p><w:r><w:t xml:space="preserve">Plain </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>bold</w:t></w:r><w:r><w:t xml:space="preserve"> and </w:t></w:r><w:r><w:rPr><w:i/><w:b w:val="0"/></w:rPr><w:t>italic</w:t></w:r><w:r><w:t xml:space="preserve"> with a </w:t></w:r><w:hyperlink r:id="rId9"><w:r><w:t>link</w:t></w:r></w:hyperlink><w:r><w:t>.</w:t></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del></w:p>
<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>first</w:t></w:r></w:p>
<w:p><w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>nested</w:t></w:r></w:p>
<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr><w:r><w:t>second</w:t></w:r></w:p>
<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="2"/></w:numPr></w:pPr><w:r><w:t>step one</w:t></w:r></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Name</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Qty</w:t></w:r></w:p></w:tc></w:tr>
<w:tr><w:tc><w:p><w:r><w:t>Apple</w:t></w:r></w:p><w:p><w:r><w:t>red</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>3</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
<w:p><w:r><w:t>End</w:t></w:r><w:r><w:br/><w:t>line</w:t></w:r></w:p>
</w:body></w:document>`

const docxStyles = `<?xml version="1.0"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>
<w:style w:type="paragraph" w:styleId="Kop2"><w:name w:val="heading 2"/></w:style>
</w:styles>`

const docxNumbering = `<?xml version="1.0"?>
<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:abstractNum w:abstractNumId="10"><w:lvl w:ilvl="0"><w:numFmt w:val="bullet"/></w:lvl><w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/></w:lvl></w:abstractNum>
<w:abstractNum w:abstractNumId="11"><w:lvl w:ilvl="0"><w:numFmt w:val="decimal"/></w:lvl></w:abstractNum>
<w:num w:numId="1"><w:abstractNumId w:val="10"/></w:num>
<w:num w:numId="2"><w:abstractNumId w:val="11"/></w:num>
</w:numbering>`

const docxRels = `<?xml version="1.0"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/a?b=1&amp;c=2" TargetMode="External"/>
</Relationships>`

func TestDocxToHTML(t *testing.T) {
	t.Parallel()
	data := makeZip(t, map[string]string{
		"[Content_Types].xml":          `<Types/>`,
		"word/document.xml":            docxBody,
		"word/styles.xml":              docxStyles,
		"word/numbering.xml":           docxNumbering,
		"word/_rels/document.xml.rels": docxRels,
	})
	if k := Detect(data, "upload.bin", ""); k != KindDOCX {
		t.Fatalf("Detect = %s", k)
	}
	got, err := ToHTML(t.Context(), data, "report.docx", "")
	if err != nil {
		t.Fatal(err)
	}
	want := "<html><body>\n" +
		"<h1>Quarterly &amp; Report</h1>\n" +
		"<h2>Overview</h2>\n" +
		`<p>Plain <strong>bold</strong> and <em>italic</em> with a <a href="https://example.com/a?b=1&amp;c=2">link</a>.</p>` + "\n" +
		"<ul>\n<li>first<ul>\n<li>nested</li>\n</ul>\n</li>\n<li>second</li>\n</ul>\n" +
		"<ol>\n<li>step one</li>\n</ol>\n" +
		"<table>\n<tr><td>Name</td><td>Qty</td></tr>\n<tr><td>Apple<br>red</td><td>3</td></tr>\n</table>\n" +
		"<p>End<br>line</p>\n" +
		"</body></html>"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("html (-want +got):\n%s", diff)
	}
}

func TestDocxLimits(t *testing.T) {
	t.Parallel()
	big := makeZip(t, map[string]string{"word/document.xml": strings.Repeat("a", MaxUncompressed+1)})
	if _, err := ToHTML(t.Context(), big, "bomb.docx", ""); !errors.Is(err, ErrTooLarge) {
		t.Errorf("bomb: err = %v, want ErrTooLarge", err)
	}
	files := map[string]string{"word/document.xml": docxBody}
	for i := range MaxZipEntries + 1 {
		files["x/"+strings.Repeat("n", 1+i%7)+string(rune('a'+i%26))+strings.Repeat("0", i/182)] = ""
	}
	many := makeZip(t, files)
	zr, _ := zip.NewReader(bytes.NewReader(many), int64(len(many)))
	if len(zr.File) > MaxZipEntries {
		if _, err := ToHTML(t.Context(), many, "many.docx", ""); !errors.Is(err, ErrTooLarge) {
			t.Errorf("entries: err = %v, want ErrTooLarge", err)
		}
	}
	if _, err := ToHTML(t.Context(), []byte("PK\x03\x04 broken"), "x.docx", ""); !errors.Is(err, ErrCorrupt) {
		t.Errorf("broken: err = %v, want ErrCorrupt", err)
	}
	bad := makeZip(t, map[string]string{"word/document.xml": "<w:document><w:body><w:p>"})
	if _, err := ToHTML(t.Context(), bad, "x.docx", ""); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad xml: err = %v, want ErrCorrupt", err)
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	xlsx := makeZip(t, map[string]string{"xl/workbook.xml": "<workbook/>"})
	tests := []struct {
		name        string
		data        string
		filename    string
		contentType string
		want        Kind
	}{
		{"pdf magic wins", "%PDF-1.7\n...", "file.html", "text/html", KindPDF},
		{"pdf by extension", "junk", "a.PDF", "", KindPDF},
		{"xlsx zip", string(xlsx), "book.xlsx", "", KindUnsupported},
		{"ole doc", "\xd0\xcf\x11\xe0rest", "a.doc", "", KindUnsupported},
		{"rtf", `{\rtf1 hello}`, "a.rtf", "", KindUnsupported},
		{"html sniff", "\xef\xbb\xbf  <!DOCTYPE html><p>x", "a.txt", "", KindHTML},
		{"xhtml sniff", `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml">`, "", "", KindHTML},
		{"htm ext", "<p>x</p>", "a.htm", "", KindHTML},
		{"markdown ext", "# T", "README.md", "", KindMarkdown},
		{"markdown type", "# T", "", "text/markdown; charset=utf-8", KindMarkdown},
		{"csv ext", "a,b", "d.csv", "", KindCSV},
		{"csv type", "a,b", "", "text/csv", KindCSV},
		{"text ext", "hi", "n.txt", "", KindText},
		{"text type", "hi", "", "text/plain", KindText},
		{"octet text", "hi", "", "application/octet-stream", KindText},
		{"binary", "\x00\x01\x02", "", "", KindUnsupported},
		{"other ext", "hi", "deck.pptx", "", KindUnsupported},
		{"epub type", "hi", "", "application/epub+zip", KindUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Detect([]byte(tt.data), tt.filename, tt.contentType); got != tt.want {
				t.Errorf("Detect = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestToHTML(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		data     string
		filename string
		want     string
		wantErr  error
	}{
		{"text", "Hello <world>\nsecond line\n\n\nNext para\r\n", "a.txt",
			"<html><body>\n<p>Hello &lt;world&gt;<br>\nsecond line</p>\n<p>Next para</p>\n</body></html>", nil},
		{"utf16 text", "\xff\xfeh\x00i\x00", "a.txt", "<html><body>\n<p>hi</p>\n</body></html>", nil},
		{"cp1252 text", "caf\xe9", "a.txt", "<html><body>\n<p>café</p>\n</body></html>", nil},
		{"markdown", "# Title\n\n*x* <b>", "a.md", "<pre># Title\n\n*x* &lt;b&gt;</pre>", nil},
		{"html as is", "<html><body><p>x</p></body></html>", "a.html", "<html><body><p>x</p></body></html>", nil},
		{"csv comma with quotes and BOM", "\xef\xbb\xbfname,note\n\"Smith, J\",\"said \"\"hi\"\"\"\nx,<y>\n", "d.csv",
			"<html><body>\n<table>\n<thead>\n<tr><th>name</th><th>note</th></tr>\n</thead>\n<tbody>\n" +
				"<tr><td>Smith, J</td><td>said &#34;hi&#34;</td></tr>\n<tr><td>x</td><td>&lt;y&gt;</td></tr>\n</tbody>\n</table>\n</body></html>", nil},
		{"csv semicolon", "a;b;c\n1,5;2;3\n", "d.csv",
			"<html><body>\n<table>\n<thead>\n<tr><th>a</th><th>b</th><th>c</th></tr>\n</thead>\n<tbody>\n" +
				"<tr><td>1,5</td><td>2</td><td>3</td></tr>\n</tbody>\n</table>\n</body></html>", nil},
		{"csv ragged", "a,b\n1\n", "d.csv",
			"<html><body>\n<table>\n<thead>\n<tr><th>a</th><th>b</th></tr>\n</thead>\n<tbody>\n" +
				"<tr><td>1</td></tr>\n</tbody>\n</table>\n</body></html>", nil},
		{"pdf", "%PDF-1.4\n", "a.pdf", "", ErrPDF},
		{"xlsx", "PK\x03\x04", "b.xlsx", "", ErrUnsupportedType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ToHTML(t.Context(), []byte(tt.data), tt.filename, "")
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("html (-want +got):\n%s", diff)
			}
		})
	}
	_, err := ToHTML(t.Context(), []byte("x"), "deck.pptx", "")
	if err == nil || err.Error() != "docconv: unsupported file type: .pptx" {
		t.Errorf("pptx err = %v", err)
	}
}

// TestDocxLyingHeader: an entry whose header understates its size is still
// cut off while it inflates, not after.
func TestDocxLyingHeader(t *testing.T) {
	t.Parallel()
	var deflated bytes.Buffer
	fw, _ := flate.NewWriter(&deflated, flate.BestCompression)
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	for range 200 {
		_, _ = fw.Write(chunk)
	}
	_ = fw.Close()
	for _, claimed := range []uint64{100, MaxUncompressed} {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "word/document.xml", Method: zip.Deflate,
			CompressedSize64: uint64(deflated.Len()), UncompressedSize64: claimed})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(deflated.Bytes())
		_ = zw.Close()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = ToHTML(t.Context(), buf.Bytes(), "lying.docx", "")
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrCorrupt) {
			t.Errorf("claimed %d: err = %v", claimed, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*MaxUncompressed {
			t.Errorf("claimed %d: allocated %d MB for a 200 MB entry", claimed, alloc>>20)
		}
	}
}
