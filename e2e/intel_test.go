package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestIntelSDK runs intel.test.mjs (product, redactPII, changeTracking of
// scrapes and crawls, threatProtection, branding, activity) with the official SDK against the built server, which
// has no model.
func TestIntelSDK(t *testing.T) {
	node := sdkNode(t, "@mendable/firecrawl-js")
	shop, err := os.ReadFile("../internal/product/testdata/shopify.html")
	if err != nil {
		t.Fatal(err)
	}
	brand, err := os.ReadFile("../internal/branding/testdata/saas.html")
	if err != nil {
		t.Fatal(err)
	}
	var menuFetches atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/shop", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(shop)
	})
	mux.HandleFunc("/contact", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><main><h1>Contact</h1><p>Write to office@example.com or call +44 20 7946 0958.</p><p>IBAN DE89 3704 0044 0532 0130 00</p></main></body></html>`)
	})
	mux.HandleFunc("/menu", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		price := "5"
		if menuFetches.Add(1) > 1 {
			price = "6"
		}
		io.WriteString(w, `<html><body><main><h1>Menu</h1><p>Tea 4</p><p>Coffee `+price+`</p></main></body></html>`)
	})
	mux.HandleFunc("/brand", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write(brand)
	})
	mux.HandleFunc("/go", func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := strings.Cut(r.Host, ":")
		http.Redirect(w, r, "http://localhost:"+port+"/shop", http.StatusFound)
	})
	// A small site under /crawl/ in two versions (GET /crawl/next moves
	// to the second): /crawl/a changes its price, /crawl/b disappears
	// (404) and is no longer linked.
	var crawlV2 atomic.Bool
	mux.HandleFunc("/crawl/{page...}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch p := r.PathValue("page"); {
		case p == "next":
			crawlV2.Store(true)
		case p == "" && crawlV2.Load():
			io.WriteString(w, `<html><body><main><h1>Cafe</h1><p><a href="/crawl/a">Prices</a></p></main></body></html>`)
		case p == "":
			io.WriteString(w, `<html><body><main><h1>Cafe</h1><p><a href="/crawl/a">Prices</a> <a href="/crawl/b">Events</a></p></main></body></html>`)
		case p == "a" && crawlV2.Load():
			io.WriteString(w, `<html><body><main><h1>Prices</h1><p>Espresso 3</p></main></body></html>`)
		case p == "a":
			io.WriteString(w, `<html><body><main><h1>Prices</h1><p>Espresso 2</p></main></body></html>`)
		case p == "b" && !crawlV2.Load():
			io.WriteString(w, `<html><body><main><h1>Events</h1><p>Jazz on Fridays.</p></main></body></html>`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `<html><body><h1>Not found</h1></body></html>`)
		}
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	blocklist := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(blocklist, []byte("# operator list\n0.0.0.0 malware-drop.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, "OPENAI_BASE_URL=", "THREAT_BLOCKLIST_FILE="+blocklist)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "intel.test.mjs")
	cmd.Dir = "sdk"
	cmd.Env = append(os.Environ(),
		"API_URL="+srv.url,
		"API_KEY="+testKey,
		"SHOP_URL="+site.URL+"/shop",
		"PII_URL="+site.URL+"/contact",
		"CHANGE_URL="+site.URL+"/menu",
		"REDIRECT_URL="+site.URL+"/go",
		"BRAND_URL="+site.URL+"/brand",
		"CRAWL_URL="+site.URL+"/crawl/",
	)
	if chromePath() != "" {
		cmd.Env = append(cmd.Env, "HAS_BROWSER=1")
	} else if os.Getenv("REQUIRE_INTEGRATION") == "1" {
		t.Fatal("chromium is not installed")
	}
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("SDK test failed: %v", err)
	}
}
