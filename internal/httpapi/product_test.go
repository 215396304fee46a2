package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/testenv"
)

// TestScrapeProductFormat drives the product format through POST
// /v2/scrape over HTTP: the real engine fetches shop pages from a local
// server and the answer carries the extracted product, or null.
func TestScrapeProductFormat(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	for _, name := range []string{"shopify", "magento", "visible", "article"} {
		b, err := os.ReadFile("../product/testdata/" + name + ".html")
		if err != nil {
			t.Fatal(err)
		}
		mux.HandleFunc("/"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(b)
		})
	}
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"price": 10}`)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	log := testenv.Logger(t)
	fc := fetch.New(fetch.Options{AllowPrivate: true}, log)
	t.Cleanup(fc.CloseIdleConnections)
	s := New(Deps{Scraper: scrape.New(scrape.Config{Fetcher: fc, Log: log}), Auth: fakeAuth{}, Log: slog.New(slog.DiscardHandler)})
	s.SetReady(true)
	api := httptest.NewServer(s)
	t.Cleanup(api.Close)

	post := func(t *testing.T, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, api.URL+"/v2/scrape", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+goodKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, m
	}
	type price struct {
		Amount    float64 `json:"amount"`
		Currency  string  `json:"currency"`
		Formatted string  `json:"formatted"`
	}
	type variant struct {
		ID     string            `json:"id"`
		Values map[string]string `json:"values"`
		Price  *price            `json:"price"`
		Sale   *struct {
			OriginalPrice price `json:"originalPrice"`
		} `json:"sale"`
		Availability *struct {
			InStock bool   `json:"inStock"`
			Text    string `json:"text"`
		} `json:"availability"`
	}
	type productJSON struct {
		Title    string    `json:"title"`
		Category string    `json:"category"`
		Variants []variant `json:"variants"`
	}
	product := func(t *testing.T, m map[string]any) (*productJSON, bool) {
		t.Helper()
		data, _ := m["data"].(map[string]any)
		raw, present := data["product"]
		if !present {
			return nil, false
		}
		b, _ := json.Marshal(raw)
		var p *productJSON
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		return p, true
	}

	t.Run("shopify variants with sale", func(t *testing.T) {
		t.Parallel()
		code, m := post(t, `{"url":"`+site.URL+`/shopify","formats":["product","markdown"]}`)
		if code != http.StatusOK {
			t.Fatalf("status %d: %v", code, m)
		}
		p, _ := product(t, m)
		if p == nil || p.Title != "Heavyweight Tee" || p.Category != "Apparel > Tees" || len(p.Variants) != 2 {
			t.Fatalf("product = %+v", p)
		}
		v := p.Variants[0]
		if v.ID != "41234567890" || v.Values["size"] != "M" || v.Price == nil || v.Price.Amount != 19 || v.Price.Currency != "USD" ||
			v.Sale == nil || v.Sale.OriginalPrice.Amount != 25 || v.Availability == nil || !v.Availability.InStock {
			t.Errorf("variant 0 = %+v", v)
		}
		if w := p.Variants[1]; w.Availability == nil || w.Availability.InStock || w.Sale != nil {
			t.Errorf("variant 1 = %+v", w)
		}
		if md, _ := m["data"].(map[string]any)["markdown"].(string); !strings.Contains(md, "Heavyweight Tee") {
			t.Errorf("markdown missing beside product: %q", md)
		}
	})
	t.Run("magento visible prices", func(t *testing.T) {
		t.Parallel()
		_, m := post(t, `{"url":"`+site.URL+`/magento","formats":["product"]}`)
		p, _ := product(t, m)
		if p == nil || len(p.Variants) != 1 || p.Variants[0].Price == nil || p.Variants[0].Price.Amount != 45 || p.Variants[0].Price.Currency != "EUR" {
			t.Fatalf("product = %+v", p)
		}
	})
	t.Run("prices only in text", func(t *testing.T) {
		t.Parallel()
		_, m := post(t, `{"url":"`+site.URL+`/visible","formats":["product"]}`)
		p, _ := product(t, m)
		if p == nil || p.Variants[0].Price == nil || p.Variants[0].Price.Formatted != "£39.99" || p.Variants[0].Sale == nil {
			t.Fatalf("product = %+v", p)
		}
	})
	for _, path := range []string{"/article", "/data.json"} {
		t.Run("no product on "+path, func(t *testing.T) {
			t.Parallel()
			code, m := post(t, `{"url":"`+site.URL+path+`","formats":["product"]}`)
			p, present := product(t, m)
			if code != http.StatusOK || !present || p != nil {
				t.Errorf("status %d, product present %v = %+v; want 200 and null", code, present, p)
			}
		})
	}
}
