package scrape

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/llm"
	"github.com/firegate/firegate/internal/llm/llmtest"
	"github.com/firegate/firegate/internal/store/teststore"
)

// teePage is a shop's product page whose price and stock change.
func teePage(price, stock string) string {
	return `<!doctype html><html><head><title>Heavyweight Tee – Northwind</title></head><body>
<header><nav><a href="/">Shop</a> <a href="/cart">Cart (0)</a></nav></header>
<main><article class="product"><h1>Heavyweight Tee</h1>
<p class="price"><span class="money">` + price + `</span></p>
<p class="stock">` + stock + `</p>
<p>A 240 gsm cotton tee, garment-dyed in Portugal. Boxy fit.</p>
<ul><li>100% organic cotton</li><li>Machine wash cold</li></ul></article></main>
<footer>© Northwind Apparel</footer></body></html>`
}

const teeSchema = `{"type":"object","properties":{"title":{"type":"string"},"price":{"type":"string"},"inStock":{"type":"boolean"}},"required":["title","price"]}`

var (
	pagePrice = regexp.MustCompile(`\$\d+\.\d\d`)
)

// teeModel answers the extraction from the page it is given: the price
// and stock it reads there, as a model would.
func teeModel(w http.ResponseWriter, r llmtest.Request) {
	page := r.LastUser()
	if !strings.HasPrefix(page, "<page>") {
		http.Error(w, "no page", http.StatusBadRequest)
		return
	}
	out, _ := json.Marshal(map[string]any{"title": "Heavyweight Tee", "price": pagePrice.FindString(page),
		"inStock": !strings.Contains(page, "Sold out")})
	llmtest.Write(w, string(out), &llmtest.Usage{PromptTokens: 200, CompletionTokens: 15})
}

func TestChangeTrackingJSONMode(t *testing.T) {
	t.Parallel()
	ps := &pageSite{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(ps.status)
		io.WriteString(w, ps.body)
	}))
	t.Cleanup(srv.Close)
	ep := llmtest.NewReplying(t, teeModel)
	e := newLLMEngine(t, ep, 0)
	st := teststore.SQLite(t)
	e.changes = storeChanges{st}
	team, err := st.CreateTeam(context.Background(), "acme")
	if err != nil {
		t.Fatal(err)
	}
	scrape := func(t *testing.T, schema string, modes ...string) *Document {
		t.Helper()
		o := defaults(srv.URL+"/tee", FormatMarkdown)
		f := Format{Type: FormatChangeTracking, Modes: modes, Prompt: "the price and whether it is in stock"}
		if schema != "" {
			f.Schema = json.RawMessage(schema)
		}
		o.Formats = append(o.Formats, f)
		o.TeamID = team.ID
		doc, err := e.Scrape(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}

	ps.set(200, teePage("$25.00", "In stock"))
	doc := scrape(t, teeSchema, ModeJSON)
	ct := doc.ChangeTracking
	if ct.ChangeStatus != "new" || ct.JSON != nil || doc.Metadata.CreditsUsed != 5 {
		t.Errorf("first sight: %+v, credits %d", ct, doc.Metadata.CreditsUsed)
	}
	reqs := ep.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].ResponseFormat), `"price"`) || !strings.Contains(reqs[0].System(), "the price and whether it is in stock") {
		t.Fatalf("model calls: %d; %s", len(reqs), reqs[0].ResponseFormat)
	}

	// Same page: same, no comparison.
	if ct := scrape(t, teeSchema, ModeJSON).ChangeTracking; ct.ChangeStatus != "same" || ct.JSON != nil {
		t.Errorf("unchanged: %+v", ct)
	}

	// Sale and sold out: both keys, the title not.
	ps.set(200, teePage("$19.00", "Sold out"))
	doc = scrape(t, teeSchema, ModeJSON, ModeGitDiff)
	ct = doc.ChangeTracking
	got, _ := json.Marshal(ct.JSON)
	want := `{"inStock":{"previous":true,"current":false},"price":{"previous":"$25.00","current":"$19.00"}}`
	if ct.ChangeStatus != "changed" || string(got) != want || ct.Diff == nil || !strings.Contains(ct.Diff.Text, "+$19.00") {
		t.Errorf("changed: status %s json %s, want %s; diff %v", ct.ChangeStatus, got, want, ct.Diff)
	}

	// Without a schema: the keys of both objects.
	ps.set(200, teePage("$21.00", "Sold out"))
	ct = scrape(t, "", ModeJSON).ChangeTracking
	if got, _ := json.Marshal(ct.JSON); string(got) != `{"price":{"previous":"$19.00","current":"$21.00"}}` {
		t.Errorf("schema-less: %s", got)
	}

	// A model that gives nothing valid: a warning, json null, and the
	// last extraction stays the comparison point.
	bad := llmtest.NewReplying(t, func(w http.ResponseWriter, r llmtest.Request) { llmtest.Write(w, "not json", nil) })
	c, err := llm.New(llm.Options{BaseURL: bad.BaseURL, Model: "scripted-model"})
	if err != nil {
		t.Fatal(err)
	}
	good := e.llm
	e.llm = c
	ps.set(200, teePage("$22.00", "Sold out"))
	doc = scrape(t, teeSchema, ModeJSON)
	if doc.ChangeTracking.ChangeStatus != "changed" || doc.ChangeTracking.JSON != nil || doc.Warning == nil || !strings.Contains(*doc.Warning, "changeTracking") {
		t.Errorf("invalid model output: %+v, warning %v", doc.ChangeTracking, doc.Warning)
	}
	e.llm = good
	ps.set(200, teePage("$23.00", "Sold out"))
	if got, _ := json.Marshal(scrape(t, teeSchema, ModeJSON).ChangeTracking.JSON); string(got) != `{"price":{"previous":"$21.00","current":"$23.00"}}` {
		t.Errorf("after a failed extraction: %s", got)
	}
}

func TestChangeTrackingJSONBadSchema(t *testing.T) {
	t.Parallel()
	ep := llmtest.NewReplying(t, teeModel)
	e := newLLMEngine(t, ep, 0)
	e.changes = storeChanges{teststore.SQLite(t)}
	o := defaults("http://127.0.0.1:1/never-fetched", FormatMarkdown)
	o.Formats = append(o.Formats, Format{Type: FormatChangeTracking, Modes: []string{ModeJSON}, Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"nope"}}}`)})
	_, err := e.Scrape(context.Background(), o)
	var f *errcode.Failure
	if !errors.Is(err, ErrInvalidSchema) || !errors.As(err, &f) || !strings.Contains(f.Msg, "formats.changeTracking.schema") {
		t.Errorf("bad schema: %v", err)
	}
	if n := len(ep.Requests()); n != 0 {
		t.Errorf("%d model calls for a bad schema", n)
	}
}

func TestCompareJSON(t *testing.T) {
	for _, tc := range []struct{ schema, prev, cur, want string }{
		{`{"properties":{"b":{},"a":{}}}`, `{"a":1,"b":[1,2]}`, `{"b":[1, 2],"a":2}`, `{"a":{"previous":1,"current":2}}`},
		{``, ``, `{"a":{"x":1,"y":2}}`, `{"a":{"previous":null,"current":{"x":1,"y":2}}}`},
		{``, `{"a":{"y":2,"x":1}}`, `{"a":{"x":1,"y":2}}`, `{}`},
		{``, `{"gone":1}`, `{}`, `{"gone":{"previous":1,"current":null}}`},
	} {
		var prev json.RawMessage
		if tc.prev != "" {
			prev = json.RawMessage(tc.prev)
		}
		got, _ := json.Marshal(compareJSON(json.RawMessage(tc.schema), prev, json.RawMessage(tc.cur)))
		if string(got) != tc.want {
			t.Errorf("compareJSON(%s, %s, %s) = %s, want %s", tc.schema, tc.prev, tc.cur, got, tc.want)
		}
	}
	if compareJSON(nil, json.RawMessage(`{}`), nil) != nil {
		t.Error("an unknown current object compared")
	}
}
