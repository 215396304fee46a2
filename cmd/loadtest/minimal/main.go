// Command minimal is the baseline that cmd/loadtest -compare measures the
// server against: the least a plain scrape to markdown can do. It answers
// POST /v2/scrape ({"url": ...}) by fetching the page with net/http,
// decoding it by its declared charset, parsing it with x/net/html,
// extracting the article with readeck's go-readability and converting it
// with html-to-markdown v2 (base, CommonMark and table plugins), and writes {"success":true,"data":{...}} with the
// markdown and the page's title. There is no auth, no limits, no metadata
// beyond the title, no cache and no URL policy. It is a module of its own so
// that the two libraries never enter the server's dependencies:
//
//	cd cmd/loadtest/minimal && go build -o /tmp/minimal . && PORT=3003 /tmp/minimal
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"time"

	readability "codeberg.org/readeck/go-readability"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// maxBody bounds a fetched page, as the server's FETCH_MAX_BYTES does.
const maxBody = 10 << 20

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "3003"
	}
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("POST /v2/scrape", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			URL string `json:"url"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			fail(w, http.StatusBadRequest, "bad body: "+err.Error())
			return
		}
		md, title, status, err := scrape(r, client, conv, req.URL)
		if err != nil {
			fail(w, http.StatusBadGateway, err.Error())
			return
		}
		// Cannot fail: maps of strings and an int.
		data, _ := json.Marshal(map[string]any{"markdown": md, "metadata": map[string]any{
			"title": title, "sourceURL": req.URL, "url": req.URL, "statusCode": status}})
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write([]byte(`{"success":true,"data":`))
		w.Write(data)
		w.Write([]byte("}\n"))
	})
	srv := &http.Server{Addr: "127.0.0.1:" + port, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

func scrape(r *http.Request, client *http.Client, conv *converter.Converter, raw string) (md, title string, status int, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", "", 0, fmt.Errorf("bad url %q", raw)
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, raw, nil)
	if err != nil {
		return "", "", 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", "", 0, err
	}
	defer resp.Body.Close()
	// Decoded by the declared charset (the library's own reader would
	// also guess it from the bytes, which costs more than the rest).
	body, err := charset.NewReader(io.LimitReader(resp.Body, maxBody), resp.Header.Get("Content-Type"))
	if err != nil {
		return "", "", 0, err
	}
	doc, err := html.Parse(body)
	if err != nil {
		return "", "", 0, err
	}
	a, err := readability.FromDocument(doc, u)
	if err != nil {
		return "", "", 0, err
	}
	if a.Node == nil {
		return "", a.Title, resp.StatusCode, nil
	}
	out, err := conv.ConvertNode(a.Node)
	if err != nil {
		return "", "", 0, err
	}
	return string(out), a.Title, resp.StatusCode, nil
}

func fail(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"success": false, "error": msg})
}
