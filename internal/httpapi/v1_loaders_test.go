package httpapi

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/crawl/testsite"
)

// loaderBody is one file of testdata/v1loaders: a v1 request body of an
// integration (reconstructed: see the README there) and the document
// fields its answer must carry.
type loaderBody struct {
	Client string          `json:"client"`
	Path   string          `json:"path"`
	Expect []string        `json:"expect"`
	Body   json.RawMessage `json:"body"`
}

// TestV1LoaderBodies replays the v1 bodies of LangChain, LlamaIndex, n8n
// and Dify against the /v1 routes of a server with the real engine,
// crawler and mapper and a local site: each is accepted and answered in
// the v1 shape its client reads (a document, a crawl whose status lists
// documents, or links as URL strings).
func TestV1LoaderBodies(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/v1loaders/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("loader bodies: %v, %d files", err, len(files))
	}
	_, siteURL := serveSite(t, testsite.Options{Pages: 12})
	f := newJobsFixture(t, "sqlite", fxOptions{})
	mapSrv, _ := setup(t, &fakeScraper{})
	mapSrv.mapper = realMapper(t, true)
	mapURL := mapSite(t).URL
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var lb loaderBody
		if err := json.Unmarshal(raw, &lb); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			switch lb.Path {
			case "/v1/scrape":
				code, m := f.send(t, http.MethodPost, lb.Path, fxKeyOne, strings.ReplaceAll(string(lb.Body), "{{SITE}}", siteURL))
				data, _ := m["data"].(map[string]any)
				if code != http.StatusOK || m["success"] != true {
					t.Fatalf("%s: %d %v", lb.Client, code, m)
				}
				checkFields(t, lb, data)
			case "/v1/crawl":
				code, m := f.send(t, http.MethodPost, lb.Path, fxKeyOne, strings.ReplaceAll(string(lb.Body), "{{SITE}}", siteURL))
				id, _ := m["id"].(string)
				if code != http.StatusOK || m["success"] != true || m["url"] != f.base+"/v1/crawl/"+id {
					t.Fatalf("%s: %d %v", lb.Client, code, m)
				}
				st := f.waitDone(t, "/v1/crawl/"+id)
				docs, _ := st["data"].([]any)
				if st["status"] != "completed" || len(docs) == 0 {
					t.Fatalf("%s: crawl status %v, %d documents", lb.Client, st["status"], len(docs))
				}
				for _, d := range docs {
					doc, _ := d.(map[string]any)
					checkFields(t, lb, doc)
				}
			case "/v1/map":
				rec, m := do(t, mapSrv, http.MethodPost, lb.Path, goodKey, strings.ReplaceAll(string(lb.Body), "{{SITE}}", mapURL))
				links, _ := m["links"].([]any)
				if rec.Code != http.StatusOK || m["success"] != true || len(links) == 0 {
					t.Fatalf("%s: %d %v", lb.Client, rec.Code, m)
				}
				for _, l := range links {
					if s, ok := l.(string); !ok || !strings.HasPrefix(s, mapURL+"/") {
						t.Errorf("%s: link %v is not a URL string of the site", lb.Client, l)
					}
				}
			default:
				t.Fatalf("%s: no replay for %s", file, lb.Path)
			}
		})
	}
}

// checkFields checks that a document has each field lb expects, non-empty.
func checkFields(t *testing.T, lb loaderBody, doc map[string]any) {
	t.Helper()
	for _, k := range lb.Expect {
		switch v := doc[k].(type) {
		case string:
			if v == "" {
				t.Errorf("%s: %s is empty", lb.Client, k)
			}
		case []any:
			if len(v) == 0 {
				t.Errorf("%s: %s is empty", lb.Client, k)
			}
		case map[string]any:
		default:
			t.Errorf("%s: document has no %s: %v", lb.Client, k, keysOf(doc))
		}
	}
}
