package extracteval

import (
	"net/http"

	"compress/gzip"
	"encoding/json"
	"fmt"
	"github.com/firegate/firegate/internal/fetch"
	"hash/fnv"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Page is one corpus page with its ground truth.
type Page struct {
	ID   string
	URL  string
	Type string
	HTML []byte
	Text string // ground_truth.main_content
	// Markdown is ground_truth.main_content_markdown ("" on the pages
	// without one).
	Markdown string
	With     []string // snippets the extraction must contain
	Without  []string // boilerplate snippets it must not contain
	Holdout  bool     // in the held-out fifth (by domain)
}

type groundTruth struct {
	URL      string `json:"url"`
	Internal struct {
		PageType struct {
			Primary string `json:"primary"`
		} `json:"page_type"`
	} `json:"_internal"`
	GroundTruth struct {
		MainContent string   `json:"main_content"`
		Markdown    string   `json:"main_content_markdown"`
		With        []string `json:"with"`
		Without     []string `json:"without"`
	} `json:"ground_truth"`
}

// LoadCorpus reads dir/ground-truth/*.json and the matching
// dir/html/*.html.gz, in file order. Each page's domain decides whether it
// is held out.
func LoadCorpus(dir string) ([]Page, error) {
	files, err := filepath.Glob(filepath.Join(dir, "ground-truth", "*.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no ground-truth/*.json under %s", dir)
	}
	sort.Strings(files)
	pages := make([]Page, 0, len(files))
	for _, f := range files {
		id := strings.TrimSuffix(filepath.Base(f), ".json")
		p, err := loadPage(dir, id)
		if err != nil {
			return nil, err
		}
		pages = append(pages, p)
	}
	return pages, nil
}

func loadPage(dir, id string) (Page, error) {
	b, err := os.ReadFile(filepath.Join(dir, "ground-truth", id+".json"))
	if err != nil {
		return Page{}, err
	}
	var gt groundTruth
	if err := json.Unmarshal(b, &gt); err != nil {
		return Page{}, fmt.Errorf("%s: %w", id, err)
	}
	f, err := os.Open(filepath.Join(dir, "html", id+".html.gz"))
	if err != nil {
		return Page{}, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return Page{}, fmt.Errorf("%s: %w", id, err)
	}
	h, err := io.ReadAll(z)
	if err != nil {
		return Page{}, fmt.Errorf("%s: %w", id, err)
	}
	return Page{
		ID: id, URL: gt.URL, Type: gt.Internal.PageType.Primary, HTML: h,
		Text: gt.GroundTruth.MainContent, Markdown: gt.GroundTruth.Markdown, With: gt.GroundTruth.With, Without: gt.GroundTruth.Without,
		Holdout: isHoldout(gt.URL),
	}, nil
}

// isHoldout puts a fifth of the domains (by an FNV hash of the host without
// "www.") in the held-out set, so no domain is in both halves.
func isHoldout(rawURL string) bool {
	host := rawURL
	if u, err := url.Parse(rawURL); err == nil && u.Host != "" {
		host = u.Hostname()
	}
	host = strings.TrimPrefix(strings.ToLower(host), "www.")
	h := fnv.New32a()
	h.Write([]byte(host))
	return h.Sum32()%5 == 0
}

// Dev, Held and All select the development pages, the held-out pages and
// every page.
func Dev(p *Page) bool  { return !p.Holdout }
func Held(p *Page) bool { return p.Holdout }
func All(*Page) bool    { return true }

// OfType returns the pages of type t, or all pages when t is empty.
func OfType(pages []Page, t string) []Page {
	if t == "" {
		return pages
	}
	var sel []Page
	for _, p := range pages {
		if p.Type == t {
			sel = append(sel, p)
		}
	}
	return sel
}

// DecodedHTML is the page's HTML decoded to UTF-8 by the server's charset
// rules (as the scrape engine decodes it), for reference extractors.
func DecodedHTML(p *Page) string {
	r := fetch.Response{Body: p.HTML, ContentType: "text/html", Header: http.Header{"Content-Type": {"text/html"}}}
	return r.Text()
}
