package scrape

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/product"
	"github.com/firegate/firegate/internal/testenv"
)

// shopSite serves the product package's test pages.
func shopSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for _, name := range []string{"shopify", "visible"} {
		b, err := os.ReadFile("../product/testdata/" + name + ".html")
		if err != nil {
			t.Fatal(err)
		}
		mux.HandleFunc("/"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(b)
		})
	}
	mux.HandleFunc("/noprice", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<html><head><meta property="og:type" content="product"><meta property="og:title" content="Lamp">` +
			`<meta property="product:brand" content="Brand X"></head><body><h1>Lamp</h1><p>Call us for a quote.</p></body></html>`))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func decodeProduct(t *testing.T, doc *Document) *product.Product {
	t.Helper()
	if doc.Product == nil {
		t.Fatal("product absent")
	}
	var p *product.Product
	if err := json.Unmarshal(*doc.Product, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProductWithoutModel(t *testing.T) {
	t.Parallel()
	s := shopSite(t)
	log := testenv.Logger(t)
	e := New(Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Log: log})
	doc, err := e.Scrape(context.Background(), defaults(s.URL+"/shopify", FormatProduct))
	if err != nil {
		t.Fatal(err)
	}
	p := decodeProduct(t, doc)
	if p == nil || p.Title != "Heavyweight Tee" || len(p.Variants) != 2 || p.Variants[0].Sale == nil {
		t.Fatalf("product = %+v", p)
	}
	if doc.Metadata.CreditsUsed != 1 || doc.Markdown != nil {
		t.Errorf("credits %d, markdown %v: product alone costs 1 and adds no markdown", doc.Metadata.CreditsUsed, doc.Markdown)
	}
}

func TestProductModelFillsGaps(t *testing.T) {
	t.Parallel()
	s := shopSite(t)
	t.Run("complete markup: no model call", func(t *testing.T) {
		t.Parallel()
		ep := llmtest.New(t, llmtest.Answer(`{"title":"WRONG"}`, nil))
		e := newLLMEngine(t, ep, 0)
		doc, err := e.Scrape(context.Background(), defaults(s.URL+"/shopify", FormatProduct))
		if err != nil {
			t.Fatal(err)
		}
		if p := decodeProduct(t, doc); p == nil || p.Title != "Heavyweight Tee" {
			t.Errorf("product = %+v", p)
		}
		if n := len(ep.Requests()); n != 0 {
			t.Errorf("%d model calls for a page whose markup says everything", n)
		}
	})
	t.Run("gaps filled, nothing overwritten", func(t *testing.T) {
		t.Parallel()
		// The markup names title and brand but no price: the model is
		// asked, and only its description and price are taken.
		ep := llmtest.New(t, llmtest.Answer(`{"title":"Lamp (model)","brand":"Other","description":"A lamp.","variants":[{"price":{"amount":120,"currency":"EUR"},"availability":{"inStock":true}}]}`, nil))
		e := newLLMEngine(t, ep, 0)
		doc, err := e.Scrape(context.Background(), defaults(s.URL+"/noprice", FormatProduct))
		if err != nil {
			t.Fatal(err)
		}
		p := decodeProduct(t, doc)
		if p == nil || p.Title != "Lamp" || p.Brand != "Brand X" || p.Description != "A lamp." || len(p.Variants) != 1 ||
			p.Variants[0].Price == nil || p.Variants[0].Price.Amount != 120 || p.Variants[0].Price.Currency != "EUR" {
			t.Errorf("product = %+v", p)
		}
		if n := len(ep.Requests()); n != 1 {
			t.Errorf("%d model calls, want 1", n)
		}
		if doc.Metadata.CreditsUsed != 1 {
			t.Errorf("credits = %d", doc.Metadata.CreditsUsed)
		}
	})
}
