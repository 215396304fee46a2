package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/pdfparse/pdftest"
)

// textPDF is a one-page PDF showing the lines.
func textPDF(lines ...string) []byte {
	return pdftest.FlateDoc(func(w io.Writer) {
		for i, l := range lines {
			fmt.Fprintf(w, "BT /F1 12 Tf 72 %d Td (%s) Tj ET\n", 720-i*16, l)
		}
	})
}

// parseUpload posts a file to /v2/parse and decodes the answer.
func parseUpload(t *testing.T, srv *server, name string, data []byte, options string) (int, map[string]any) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write(data)
	if options != "" {
		_ = mw.WriteField("options", options)
	}
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.url+"/v2/parse", &body)
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return resp.StatusCode, out
}

// summary shortens an answer for a failure message (a bomb's markdown is
// 256 MB).
func summary(out map[string]any) string {
	s := fmt.Sprint(out)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// TestPDFBomb feeds a PDF whose content stream inflates to a 256 MiB string
// to /v2/parse and to /v2/scrape: both answer a clear 422 within the
// timeout, and the server's peak RSS stays under 300 MB.
func TestPDFBomb(t *testing.T) {
	bomb := pdftest.Bomb(256)
	t.Logf("bomb PDF: %d KB", len(bomb)>>10)
	mux := http.NewServeMux()
	mux.HandleFunc("/bomb.pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(bomb)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	srv := startServer(t)

	start := time.Now()
	status, out := parseUpload(t, srv, "bomb.pdf", bomb, `{"timeout": 30000}`)
	took := time.Since(start)
	t.Logf("parse: %d %v in %v, peak RSS %d MB", status, out["code"], took, peakRSS(t, srv.cmd.Process.Pid)>>20)
	if status != http.StatusUnprocessableEntity || out["code"] != "SCRAPE_PDF_TOO_LARGE" || out["success"] != false ||
		!strings.Contains(fmt.Sprint(out["error"]), "limits") {
		t.Errorf("parse: status %d, %s", status, summary(out))
	}
	if took > 30*time.Second {
		t.Errorf("parse took %v, over its 30 s timeout", took)
	}

	start = time.Now()
	var sout map[string]any
	status = post(t, srv, `{"url": "`+site.URL+`/bomb.pdf", "timeout": 30000}`, &sout)
	took = time.Since(start)
	peak := peakRSS(t, srv.cmd.Process.Pid)
	t.Logf("scrape: %d %v in %v, peak RSS %d MB", status, sout["code"], took, peak>>20)
	if status != http.StatusUnprocessableEntity || sout["code"] != "SCRAPE_PDF_TOO_LARGE" {
		t.Errorf("scrape: status %d, %s", status, summary(sout))
	}
	if took > 30*time.Second {
		t.Errorf("scrape took %v, over its 30 s timeout", took)
	}
	if peak > 300<<20 {
		t.Errorf("server peak RSS %d MB, want under 300 MB", peak>>20)
	}
}

// TestMergedPDF parses the output of poppler's pdfunite, whose trailer
// /Size is smaller than its object numbers: our reader cannot open it, the
// pdftotext subprocess reads both pages.
func TestMergedPDF(t *testing.T) {
	pdfunite, err := exec.LookPath("pdfunite")
	if err != nil {
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatal("pdfunite not installed")
		}
		t.Skip("pdfunite not installed")
	}
	dir := t.TempDir()
	a, b, merged := filepath.Join(dir, "a.pdf"), filepath.Join(dir, "b.pdf"), filepath.Join(dir, "merged.pdf")
	_ = os.WriteFile(a, textPDF("First document opening line", "with a second line"), 0o600)
	_ = os.WriteFile(b, textPDF("Second document closing words"), 0o600)
	if out, err := exec.Command(pdfunite, a, b, merged).CombinedOutput(); err != nil {
		t.Fatalf("pdfunite: %v %s", err, out)
	}
	data, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	srv := startServer(t)
	status, out := parseUpload(t, srv, "merged.pdf", data, `{"parsers": [{"type": "pdf", "mode": "fast"}]}`)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, summary(out))
	}
	doc, _ := out["data"].(map[string]any)
	md, _ := doc["markdown"].(string)
	for _, want := range []string{"First document opening line", "with a second line", "Second document closing words"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown %q lacks %q", md, want)
		}
	}
	meta, _ := doc["metadata"].(map[string]any)
	if meta["numPages"] != 2.0 {
		t.Errorf("numPages = %v, want 2", meta["numPages"])
	}
}
