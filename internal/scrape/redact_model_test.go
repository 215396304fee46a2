package scrape

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/llm/llmtest"
)

// clinicPage is a practice's "our team" page: people, an address, an
// e-mail, and words that contain a name without being one.
const clinicPage = `<!doctype html><html><head><title>Our team – Harbourside Physio</title></head><body>
<nav><a href="/">Home</a> <a href="/team">Team</a></nav>
<main><h1>Our team</h1>
<p>Dr. Maria Kowalski leads the clinic. Before joining us she worked in Gdańsk for ten years.</p>
<p>Tom Becker treats sports injuries on Mondays and Thursdays. Ask Tom about running gait analysis.</p>
<p>Visit us at 14 Quay Street, Bristol BS1 4QA, or write to reception@harbourside.example.</p>
<p>Our Annual report and the Tomography partners page list the equipment we use.</p>
</main></body></html>`

// piiModel answers like a model that read the page: its people and
// places, plus one it invented.
func piiModel(w http.ResponseWriter, r llmtest.Request) {
	if strings.Contains(r.System(), "personal data") {
		llmtest.Write(w, `{"persons":["Maria Kowalski","Tom Becker","Tom","Ann","Jane Invented"],"locations":["14 Quay Street, Bristol BS1 4QA","Gdańsk","Atlantis"]}`,
			&llmtest.Usage{PromptTokens: 300, CompletionTokens: 40})
		return
	}
	llmtest.Write(w, `{"lead":"<PERSON>"}`, nil) // the json format, reading the redacted page
}

func clinicSite(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, clinicPage)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/team"
}

func TestRedactPIIByModel(t *testing.T) {
	t.Parallel()
	u := clinicSite(t)
	ep := llmtest.NewReplying(t, piiModel)
	e := newLLMEngine(t, ep, 0)

	o := defaults(u, FormatMarkdown, FormatHTML)
	o.RedactPII = &RedactPII{Mode: "accurate", ReplaceStyle: "tag"}
	doc, err := e.Scrape(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	md := *doc.Markdown
	for _, want := range []string{"Dr. <PERSON> leads the clinic", "worked in <LOCATION> for ten years", "<PERSON> treats sports injuries",
		"Ask <PERSON> about", "Visit us at <LOCATION>, or write to <EMAIL>.", "Our Annual report and the Tomography partners page"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, leak := range []string{"Kowalski", "Becker", "Quay", "Gdańsk", "harbourside.example"} {
		if strings.Contains(md, leak) || strings.Contains(*doc.HTML, leak) {
			t.Errorf("%q left in the markdown or html", leak)
		}
	}
	if !strings.Contains(*doc.HTML, "Dr. &lt;PERSON&gt; leads") {
		t.Errorf("html: %s", *doc.HTML)
	}
	if doc.Warning != nil {
		t.Errorf("warning %q, want none (the model redacted PERSON and LOCATION)", *doc.Warning)
	}
	if doc.Metadata.CreditsUsed != 5 {
		t.Errorf("credits = %d, want 5 (redactPII +4)", doc.Metadata.CreditsUsed)
	}
	reqs := ep.Requests()
	if len(reqs) != 1 || !strings.HasPrefix(reqs[0].LastUser(), "<page>") || !strings.Contains(reqs[0].LastUser(), "<EMAIL>") {
		t.Fatalf("model calls: %d; the page sent must be redacted already", len(reqs))
	}

	// mask, PERSON only, with a json format that reads the redacted page.
	o = defaults(u, FormatMarkdown)
	o.Formats = append(o.Formats, jsonFormat(`{"type":"object","properties":{"lead":{"type":"string"}}}`, "Who leads the clinic?"))
	o.RedactPII = &RedactPII{Entities: []string{"PERSON"}, ReplaceStyle: "mask"}
	doc, err = e.Scrape(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	md = *doc.Markdown
	if !strings.Contains(md, "Dr. ************** leads") || !strings.Contains(md, "worked in Gdańsk") || !strings.Contains(md, "reception@harbourside.example") {
		t.Errorf("PERSON only, masked:\n%s", md)
	}
	reqs = ep.Requests()
	last := reqs[len(reqs)-1]
	if strings.Contains(last.System(), "personal data") || strings.Contains(last.LastUser(), "Kowalski") || !strings.Contains(last.LastUser(), "**************") {
		t.Errorf("the json format read the page before redaction: %q", last.LastUser())
	}

	// fast mode: no model call, the warning stays.
	n := len(ep.Requests())
	o = defaults(u, FormatMarkdown)
	o.RedactPII = &RedactPII{Mode: "fast"}
	doc, err = e.Scrape(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Requests()) != n || doc.Warning == nil || *doc.Warning != msgPIIModelEntities || !strings.Contains(*doc.Markdown, "Kowalski") {
		t.Errorf("fast mode: %d calls, warning %v", len(ep.Requests())-n, doc.Warning)
	}
}

func TestRedactPIIModelFailureFailsTheScrape(t *testing.T) {
	t.Parallel()
	u := clinicSite(t)
	e := newLLMEngine(t, llmtest.NewReplying(t, func(w http.ResponseWriter, r llmtest.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}), 0)
	o := defaults(u, FormatMarkdown)
	o.RedactPII = &RedactPII{Mode: "accurate"}
	if _, err := e.Scrape(context.Background(), o); !errors.Is(err, ErrLLMUnavailable) {
		t.Errorf("err = %v, want the model's unavailability (no page with the names it was asked to hide)", err)
	}
}
