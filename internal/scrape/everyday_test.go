package scrape

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// everydayPages are ordinary pages of ordinary sites (testdata/everyday):
// with onlyMainContent (the default) each keeps its own content and drops
// the site's navigation, footer and cookie banner.
var everydayPages = []struct {
	file   string
	status int // 0: 200
	keep   []string
	drop   []string
	// fallback: the main-content rules lose the page's content (its
	// wrapper's id says "related") and the final guard brings it back,
	// with a warning.
	fallback bool
}{
	{file: "contact.html",
		keep: []string{"Contact us", "hello@northwind.example", "7946 0321", "Monday to Friday"},
		drop: []string{"Selected Work", "Studio Journal", "Registered in England", "Join the crew", "We use cookies", "Accept all"}},
	{file: "about.html",
		keep: []string{"About us", "converted stable", "twelve bakers", "What we believe", "eighteen hours", "World Bread Awards"},
		drop: []string{"Celebration Cakes", "Wholesale Enquiries", "Dark mode", "Allergen information", "All rights reserved", "remember your basket"}},
	{file: "aboutme.html",
		keep: []string{"About me", "freelance writer and editor based in Bristol", "otters that came back"},
		drop: []string{"Get in touch", "Words and photographs are mine", "Privacy"}},
	{file: "pricing.html",
		keep: []string{"Simple pricing for every team", "14-day free trial", "Starter", "$9", "Business", "$29", "Recurring invoices", "Enterprise", "$99", "Single sign-on", "Can I change plans later?", "Registered charities"},
		drop: []string{"Integrations directory", "Developer docs", "Press kit", "Made in Portland", "Allow cookies", "improve your experience on Tallybook"}},
	{file: "faq.html",
		keep: []string{"Frequently asked questions", "How far can I ride on one charge?", "Between 60 and 110 km", "four and a half hours", "flat fee of €59", "ten years"},
		drop: []string{"Electric Bikes", "Workshop Bookings", "Proudly powered by WordPress", "KvK", "uses cookies to improve"}},
	{file: "legal.html",
		keep: []string{"Terms of Service", "Last updated: 1 February 2025", "1. Bookings", "lithium batteries", "limited to £50", "Cancellations and refunds", "law of England and Wales"},
		drop: []string{"Track a delivery", "Help centre", "Modern slavery statement", "1 Dock Road", "personalise content", "Manage preferences"}},
	{file: "notfound.html", status: http.StatusNotFound,
		keep: []string{"Page not found", "couldn't find the page", "rebuilt our website", "Go to the homepage"},
		drop: []string{"Plan Your Visit", "Learning & Participation", "registered charity", "Contact the box office", "to see how it is used"}},
	{file: "signin.html",
		keep: []string{"Sign in", "Welcome back", "Work e-mail", "Password", "Keep me signed in", "Forgot your password?", "Create an account"},
		drop: []string{"Product tour", "Customer stories", "2025 Ledgerly, Inc.", "essential cookies", "Dismiss"}},
	{file: "support.html",
		keep: []string{"Need help?", "seven days a week", "Call us", "0800 555 0199", "Live chat", "under two minutes", "service status page"},
		drop: []string{"Broadband deals", "TV packages", "Complaints code", "authorised by the regulator", "Accept All Cookies"}},
	{file: "newsletter.html",
		keep: []string{"Subscribe to our newsletter", "Every Sunday morning", "head gardener", "40,000 gardeners", "Unsubscribe with one click"},
		drop: []string{"Gardening guides", "Allotment life", "Advertise with us", "The Plot Media", "analytics and to remember"}},
	{file: "recipe.html",
		keep: []string{"Lemon Ricotta Pancakes", "ricotta folded into the batter", "Ingredients", "250 g ricotta", "Zest of 2 unwaxed lemons", "Instructions", "soft peaks", "about two minutes a side", "keeps for a day"},
		drop: []string{"Breakfast ideas", "Weeknight dinners", "Affiliate disclosure", "Brown butter banana bread", "best experience on our website"}},
	{file: "jobad.html",
		keep: []string{"Senior Backend Engineer", "Remote (Europe)", "About the role", "millions of scanned documents", "Design and run Go services", "Five or more years", "30 days of paid holiday"},
		drop: []string{"All open roles", "Life at Quillstack", "Imprint", "analyse traffic"}},
	{file: "event.html",
		keep: []string{"Go Meetup Lisbon: Spring Edition", "17 April 2025", "Rua da Prata 80", "Free, registration required", "Two talks and pizza", "Routing a fleet of vans with Go", "19:45"},
		drop: []string{"Explore events", "Start organizing", "About Meetspace", "Terms of service", "relevant events"}},
	{file: "changelog.html",
		keep: []string{"Changelog", "semantic versioning", "2.4.0", "dry-run", "S3-compatible endpoints", "file descriptors", "2.3.1", "NO_COLOR", "number of CPUs"},
		drop: []string{"Installation guide", "Configuration reference", "GitHub repository", "MIT licence"}},
	{file: "team.html",
		keep: []string{"Our team", "Twenty-two architects", "Inês Carvalho", "Founding partner", "Tomás Rey", "timber housing", "Mei Lin", "Head of landscape", "João Pires", "cantilevers"},
		drop: []string{"Projects portfolio", "News and awards", "Rua das Flores", "By continuing you accept"}},
	{file: "glossary.html",
		keep: []string{"Glossary of sailing terms", "Abeam", "right angles", "Beam reach", "Close-hauled", "Gybe", "swap sides", "Jib", "Leeward", "away from the wind"},
		drop: []string{"Sailing courses", "Boat guides", "Sailors' forum", "course progress"}},
	{file: "plaintext.html",
		keep: []string{"Release notes for netmon 0.9.2", "memory leak in the SNMP poller", "--interval", "configuration format is unchanged", "netmon-users"}},
	{file: "tableonly.html",
		keep: []string{"Destination", "Platform", "IC 512", "Amsterdam Centraal", "Utrecht via Woerden", "08:29", "Frankfurt (Main) Hbf", "11"}},
	{file: "oldtable.html",
		keep: []string{"The Smiths of Dorset", "born in Bridport in 1823", "Mary Hallett", "emigrated to Ontario", "add your line to the tree"},
		drop: []string{"Dorset branch", "Useful links", "Photo gallery", "Sign the guestbook", "visitor number"}},
	{file: "finder.html", fallback: true,
		keep: []string{"Find legal help", "Tell us where you live", "nearest first", "free and confidential", "letters or papers"},
		drop: []string{"Trustees and staff", "Become a member", "Housing and homelessness", "Registered charity", "Accessibility statement"}},
	{file: "divonly.html",
		keep: []string{"Restoring a 1972 Raleigh Twenty", "in a skip behind the church hall", "Sturmey-Archer", "Connaught green", "stainless spokes"},
		drop: []string{"Restoration projects", "Workshop tools", "Blogroll", "Bicycle technical info", "Powered by a very old laptop"}},
}

// TestEverydayPages scrapes each everyday page through the engine, over
// HTTP, with the API's defaults.
func TestEverydayPages(t *testing.T) {
	t.Parallel()
	status := map[string]int{}
	for _, p := range everydayPages {
		status["/"+p.file] = p.status
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := os.ReadFile(filepath.Join("testdata", "everyday", filepath.Base(r.URL.Path)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if s := status[r.URL.Path]; s != 0 {
			w.WriteHeader(s)
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	e := newEngine(t, true)
	for _, p := range everydayPages {
		t.Run(strings.TrimSuffix(p.file, ".html"), func(t *testing.T) {
			t.Parallel()
			doc, err := e.Scrape(context.Background(), defaults(srv.URL+"/"+p.file, FormatMarkdown))
			if err != nil {
				t.Fatal(err)
			}
			md := ""
			if doc.Markdown != nil {
				md = *doc.Markdown
			}
			flat := strings.Join(strings.Fields(unescapeMarkdown(md)), " ")
			for _, k := range p.keep {
				if !strings.Contains(flat, k) {
					t.Errorf("lost %q", k)
				}
			}
			for _, d := range p.drop {
				if strings.Contains(flat, d) {
					t.Errorf("kept %q", d)
				}
			}
			warned := doc.Warning != nil && strings.Contains(*doc.Warning, "main-content rules")
			if warned != p.fallback {
				t.Errorf("warning %v, want the fallback's: %v", doc.Warning, p.fallback)
			}
			if t.Failed() {
				t.Logf("markdown:\n%s", md)
			}
		})
	}
}

// unescapeMarkdown drops the backslashes the converter puts before
// punctuation, so expected strings can be written as the page shows them.
func unescapeMarkdown(md string) string {
	var b strings.Builder
	for i := 0; i < len(md); i++ {
		if md[i] == '\\' && i+1 < len(md) && strings.IndexByte("\\`*_{}[]()#+-.!<>|~$&", md[i+1]) >= 0 {
			continue
		}
		b.WriteByte(md[i])
	}
	return b.String()
}
