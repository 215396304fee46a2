package htmlclean

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestDetectKind(t *testing.T) {
	t.Parallel()
	ld := func(s string) string { return `<script type="application/ld+json">` + s + `</script>` }
	tests := []struct {
		name string
		head string
		body string
		want pageKind
	}{
		{"nothing", ``, `<p>x</p>`, kindUnknown},
		{"og product", `<meta property="og:type" content="product">`, ``, kindProduct},
		{"og product group is a collection", `<meta property="og:type" content="product.group">`, ``, kindUnknown},
		{"json-ld product", ld(`{"@context":"https://schema.org","@type" : "Product","name":"Tent","offers":{"@type":"Offer"}}`), ``, kindProduct},
		{"json-ld product in a type list", ld(`{"@type":["Product","Thing"]}`), ``, kindProduct},
		{"json-ld item list of many products", ld(`{"@type":"ItemList","itemListElement":[` +
			strings.Repeat(`{"@type":"Product","name":"a"},`, 9) + `{"@type":"Product","name":"b"}]}`), ``, kindUnknown},
		{"json-ld article", ld(`{"@type":"NewsArticle"}`), ``, kindArticle},
		{"og article", `<meta property="og:type" content="article">`, ``, kindArticle},
		{"microdata blog posting", ``, `<article itemscope itemtype="https://schema.org/BlogPosting"><h1>x</h1></article>`, kindArticle},
		{"microdata product", ``, `<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Tent</h1></div>`, kindProduct},
		{"json-ld forum thread", ld(`{"@type":"DiscussionForumPosting","comment":[{"@type":"Comment"}]}`), ``, kindForum},
		{"microdata forum comments", ``, `<article itemscope itemtype="http://schema.org/Comment"><p>a post</p></article>`, kindForum},
		{"question and answer page", ``, `<div itemscope itemtype="https://schema.org/QAPage"><div itemscope itemtype="https://schema.org/Comment">c</div></div>`, kindQA},
		{"json-ld question and answer page", ld(`{"@type":"QAPage","mainEntity":{"@type":"Question"}}`), ``, kindQA},
		{"question and answer page of a product", ld(`{"@type":"QAPage"}`) + `<meta property="og:type" content="product">`, ``, kindProduct},
	}
	for _, tc := range tests {
		doc, err := html.Parse(strings.NewReader(`<html><head>` + tc.head + `</head><body>` + tc.body + `</body></html>`))
		if err != nil {
			t.Fatal(err)
		}
		if got := detectKind(doc, nil); got != tc.want {
			t.Errorf("%s: kind %d, want %d", tc.name, got, tc.want)
		}
	}
}

// On a product page the reviews, ratings and recommendations around the
// product go; the same blocks on a page that is not a product stay.
func TestProductPageDropsReviews(t *testing.T) {
	t.Parallel()
	desc := `<p>` + strings.Repeat("A freestanding, double-wall tent for two, light and roomy, with two doors. ", 6) + `</p>`
	body := `<main><h1>Fjord Tent</h1><div class="product-description">` + desc + `</div>
<section class="product-reviews"><p>` + strings.Repeat("Stayed dry through two days of sideways rain, great tent. ", 4) + `</p></section>
<section><h2>Customers also bought</h2><p>` + strings.Repeat("Trail stakes, a footprint and a lantern for the tent. ", 4) + `</p></section></main>`
	product := `<html><head><meta property="og:type" content="product"></head><body>` + body + `</body></html>`
	got, err := cleanString(t, product, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "double-wall tent") {
		t.Errorf("product description lost: %s", got)
	}
	for _, gone := range []string{"sideways rain", "Customers also bought", "Trail stakes"} {
		if strings.Contains(got, gone) {
			t.Errorf("product page keeps %q: %s", gone, got)
		}
	}
	other, err := cleanString(t, `<html><head></head><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(other, "sideways rain") {
		t.Errorf("a page that is not a product lost its review section: %s", other)
	}
}

// On a forum thread the posts, which forum software often marks as
// comments, are the content; on an article the comments stay boilerplate.
func TestForumKeepsCommentPosts(t *testing.T) {
	t.Parallel()
	post := func(who, text string) string {
		return `<article class="comment post-comment"><div class="author-pane"><p>` + who + `</p><p>Senior member, 563 posts, joined 2019</p></div><p>` +
			strings.Repeat(text+" ", 5) + `</p><a href="#reply">Reply with quote</a></article>`
	}
	body := `<main><h1>Which first telescope?</h1><article class="topic"><p>` + strings.Repeat("I am new to astronomy and want a first telescope for planets, around 400 dollars. ", 3) + `</p></article>
<section class="comments">` + post("ann", "A reflector gives the most aperture for the money, get a dobsonian.") +
		post("bob", "Refractors need no collimation, which beginners appreciate on cold nights.") + `</section></main>`
	forum := `<html><head><script type="application/ld+json">{"@type":"DiscussionForumPosting","headline":"Which first telescope?"}</script></head><body>` + body + `</body></html>`
	got, err := cleanString(t, forum, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"first telescope for planets", "get a dobsonian", "need no collimation"} {
		if !strings.Contains(got, want) {
			t.Errorf("forum thread lost %q: %s", want, got)
		}
	}
	for _, gone := range []string{"563 posts", "Reply with quote"} {
		if strings.Contains(got, gone) {
			t.Errorf("forum thread keeps the poster card or a control, %q: %s", gone, got)
		}
	}
	article, err := cleanString(t, `<html><head></head><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(article, "get a dobsonian") {
		t.Errorf("a page that is not a forum kept its comments: %s", article)
	}
	// Without markup, an address naming a thread makes it one; an
	// article's address does not.
	for _, tc := range []struct {
		addr string
		keep bool
	}{
		{"https://example.org/forums/threads/which-first-telescope.4412/", true},
		{"https://example.org/board/viewtopic.php?t=12", true},
		{"https://example.org/r/astro/comments/abc/which_first_telescope/", true},
		{"https://example.org/t/which-first-telescope/1555", true},
		{"https://example.org/t/", false},
		{"https://example.org/community/index.php?topic=589061.0", true},
		{"https://example.org/thread-222085.html", true},
		{"https://example.org/thread-safety-in-go", false},
		{"https://example.org/news/2024/which-first-telescope", false},
		{"https://example.org/threadless-tees/", false},
	} {
		u, err := url.Parse(tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cleanString(t, `<html><head></head><body>`+body+`</body></html>`, Options{OnlyMainContent: true, BaseURL: u})
		if err != nil {
			t.Fatal(err)
		}
		if kept := strings.Contains(got, "get a dobsonian"); kept != tc.keep {
			t.Errorf("%s: posts kept %v, want %v: %s", tc.addr, kept, tc.keep, got)
		}
	}
}

// A poster's title, banner and statistics beside each post go by their
// class words; a board member's title on a company page stays.
func TestPosterCardParts(t *testing.T) {
	t.Parallel()
	post := func(who, text string) string {
		return `<article class="message"><h4>` + who + `</h4><h5 class="userTitle message-userTitle">Well-known member</h5>` +
			`<div class="userBanner message-userBanner"><strong>Premium Member</strong></div><div class="author_statistics">Posts: 116 Threads: 23</div><div class="message-body"><p>` +
			strings.Repeat(text+" ", 5) + `</p></div></article>`
	}
	page := `<html><body><main><h1>Which first telescope?</h1>` + post("ann", "A reflector gives the most aperture for the money, get a dobsonian.") +
		post("bob", "Refractors need no collimation, which beginners appreciate on cold nights.") + `</main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "get a dobsonian") || !strings.Contains(got, "need no collimation") {
		t.Errorf("lost a post: %s", got)
	}
	for _, gone := range []string{"Well-known member", "Premium Member", "Posts: 116"} {
		if strings.Contains(got, gone) {
			t.Errorf("kept the poster's %q: %s", gone, got)
		}
	}
	board := `<html><body><main><h1>Our board</h1><div class="board"><h3>Ann Smith</h3><p class="board-member-title">Chair of the Board</p><p>` +
		strings.Repeat("Ann has led the company's audit committee for ten years. ", 4) + `</p></div></main></body></html>`
	got, err = cleanString(t, board, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Chair of the Board") {
		t.Errorf("a board member's title went: %s", got)
	}
}

// The lines of a poster's card go by their text: ranks and statistics
// with a colon on any page, without one only on a forum thread (a seller's
// "Joined Feb 1999" on a product page stays); thread controls go.
func TestPosterLabels(t *testing.T) {
	t.Parallel()
	post := func(who, text string) string {
		return `<div class="post"><div><b>` + who + `</b></div><div>Well-known member</div><div>Join Date: Aug 2008</div><div>Joined Feb 2019</div><div class="comment-body"><p>` +
			strings.Repeat(text+" ", 5) + `</p></div><a href="/login">Log in to reply</a></div>`
	}
	body := `<main><h1>Which first telescope?</h1>` + post("ann", "A reflector gives the most aperture for the money, get a dobsonian.") +
		post("bob", "Refractors need no collimation, which beginners appreciate on cold nights.") + `</main>`
	forum := `<html><head><script type="application/ld+json">{"@type":"DiscussionForumPosting","headline":"Which first telescope?"}</script></head><body>` + body + `</body></html>`
	got, err := cleanString(t, forum, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "get a dobsonian") || !strings.Contains(got, "need no collimation") {
		t.Errorf("lost a post: %s", got)
	}
	for _, gone := range []string{"Well-known member", "Join Date", "Joined Feb", "Log in to reply"} {
		if strings.Contains(got, gone) {
			t.Errorf("kept %q: %s", gone, got)
		}
	}
	got, err = cleanString(t, `<html><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "Join Date") || !strings.Contains(got, "Joined Feb 2019") {
		t.Errorf("without forum markup: %s", got)
	}
}

// On a forum thread the replies under a "Comments" heading are the thread,
// and a reply marked as the original poster's is a post, not a poster
// card; on an article the same section stays boilerplate.
func TestForumRepliesUnderCommentsHeading(t *testing.T) {
	t.Parallel()
	reply := func(class, text string) string {
		return `<li class="Item ItemComment ` + class + `"><div class="Comment"><div class="Message userContent"><p>` +
			strings.Repeat(text+" ", 7) + `</p></div></div></li>`
	}
	body := `<main><h1>The project is no longer maintained</h1><div class="Discussion"><div class="Message userContent"><p>` +
		strings.Repeat("After many years the company behind the software has ended its open source edition, so please plan a migration. ", 6) +
		`</p></div></div><div class="CommentsWrap"><h2 class="CommentHeading">Comments</h2><ul class="MessageList Comments">` +
		reply("Rank-Admin", "We will keep hosting the site and the code stays available to everyone who wants it.") +
		reply("Rank-Admin isOriginalPoster", "Hosting is not maintenance: without security releases the forums are at risk.") +
		`</ul></div></main>`
	forum := `<html><head><script type="application/ld+json">{"@type":"DiscussionForumPosting","headline":"The project is no longer maintained"}</script></head><body>` + body + `</body></html>`
	got, err := cleanString(t, forum, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"plan a migration", "keep hosting the site", "without security releases"} {
		if !strings.Contains(got, want) {
			t.Errorf("forum thread lost %q: %s", want, got)
		}
	}
	article, err := cleanString(t, `<html><head></head><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(article, "plan a migration") || strings.Contains(article, "keep hosting the site") {
		t.Errorf("an article's comments section: %s", article)
	}
}

// The permalink beside each post of a thread ("#12") goes on a forum;
// the same link on a page that is not one stays.
func TestPostNumberLinks(t *testing.T) {
	t.Parallel()
	post := func(n, text string) string {
		return `<article class="message"><ul class="message-attribution"><li><a href="/threads/t.1/post-` + n + `">#` + n + `</a></li></ul><div class="message-body"><p>` +
			strings.Repeat(text+" ", 5) + `</p></div></article>`
	}
	body := `<main><h1>Which first telescope?</h1>` + post("1", "A reflector gives the most aperture for the money, get a dobsonian.") +
		post("2", "Refractors need no collimation, which beginners appreciate on cold nights.") + `</main>`
	forum := `<html><head><script type="application/ld+json">{"@type":"DiscussionForumPosting","headline":"Which first telescope?"}</script></head><body>` + body + `</body></html>`
	got, err := cleanString(t, forum, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "get a dobsonian") || !strings.Contains(got, "need no collimation") {
		t.Errorf("lost a post: %s", got)
	}
	if strings.Contains(got, "#1<") || strings.Contains(got, "#2<") {
		t.Errorf("kept a post's number: %s", got)
	}
	got, err = cleanString(t, `<html><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "#1<") {
		t.Errorf("without forum markup the link went: %s", got)
	}
}

// A post's counters and the poster's state ("12", "3 likes", "Offline") go
// on a forum thread and on a question-and-answer page, and stay on other
// pages.
func TestPostCounters(t *testing.T) {
	t.Parallel()
	post := func(text string) string {
		return `<div class="post"><div class="votes"><span>12</span></div><div class="state">Offline</div><div class="body"><p>` +
			strings.Repeat(text+" ", 5) + `</p></div><div class="footer-bar"><span>3 likes</span></div></div>`
	}
	body := `<main><h1>Which first telescope?</h1>` + post("A reflector gives the most aperture for the money, get a dobsonian.") +
		post("Refractors need no collimation, which beginners appreciate on cold nights.") + `</main>`
	forum := `<html><head><script type="application/ld+json">{"@type":"DiscussionForumPosting","headline":"Which first telescope?"}</script></head><body>` + body + `</body></html>`
	got, err := cleanString(t, forum, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "get a dobsonian") || !strings.Contains(got, "need no collimation") {
		t.Errorf("lost a post: %s", got)
	}
	for _, gone := range []string{">12<", "Offline", "3 likes"} {
		if strings.Contains(got, gone) {
			t.Errorf("kept %q: %s", gone, got)
		}
	}
	got, err = cleanString(t, `<html><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, ">12<") {
		t.Errorf("without forum markup the number went: %s", got)
	}
	qa := `<html><head><script type="application/ld+json">{"@type":"QAPage","mainEntity":{"@type":"Question"}}</script></head><body>` + body + `</body></html>`
	got, err = cleanString(t, qa, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, ">12<") || strings.Contains(got, "3 likes") || !strings.Contains(got, "need no collimation") {
		t.Errorf("question and answer page: %s", got)
	}
}

// A question-and-answer page whose address names a forum thread keeps the
// answers its software marks as comments; at a question's address they
// stay comments.
func TestQAThreadAnswersAsComments(t *testing.T) {
	t.Parallel()
	answer := func(text string) string {
		return `<article class="comment js-comment"><div class="comment-content"><p>` + strings.Repeat(text+" ", 6) + `</p></div></article>`
	}
	page := `<html><head><script type="application/ld+json">{"@type":"QAPage","mainEntity":{"@type":"Question"}}</script></head><body><main><h1>Which first telescope?</h1><article class="forum node"><div class="content"><p>` +
		strings.Repeat("I am new to astronomy and want a first telescope for planets, around 400 dollars. ", 5) + `</p></div></article>` +
		`<div id="comments" class="post-comments comment-wrapper">` + answer("A reflector gives the most aperture for the money, get a dobsonian.") +
		answer("Refractors need no collimation, which beginners appreciate on cold nights.") + `</div></main></body></html>`
	for _, tc := range []struct {
		addr string
		keep bool
	}{
		{"https://example.org/forum/astronomy/which-first-telescope", true},
		{"https://example.org/questions/4412/which-first-telescope", false},
	} {
		u, err := url.Parse(tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cleanString(t, page, Options{OnlyMainContent: true, BaseURL: u})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "first telescope for planets") {
			t.Errorf("%s: lost the question: %s", tc.addr, got)
		}
		if kept := strings.Contains(got, "get a dobsonian") && strings.Contains(got, "need no collimation"); kept != tc.keep {
			t.Errorf("%s: answers kept %v, want %v: %s", tc.addr, kept, tc.keep, got)
		}
	}
}

// A thread software's labels around the posts (edit notes, a quote's
// "Click to expand...", a question page's answer form and prompts, a post's
// age) go on a thread and stay on other pages.
func TestThreadLabels(t *testing.T) {
	t.Parallel()
	post := func(text string) string {
		return `<div class="post"><div class="body"><blockquote><p>` + strings.Repeat("Which mount should I buy? ", 3) + `</p><div class="q-more">Click to expand...</div></blockquote><p>` +
			strings.Repeat(text+" ", 5) + `</p><div class="edited">Last edited: Jul 6, 2024</div><div class="age"><span>3 hours ago</span></div><div class="edit-note">Last edited: <time>Oct 1, 2024</time></div><div class="who"><span>wrote on</span></div><div class="role">Thread Starter</div></div></div>`
	}
	body := `<main><h1>Which first telescope?</h1>` + post("A reflector gives the most aperture for the money, get a dobsonian.") +
		post("Refractors need no collimation, which beginners appreciate on cold nights.") +
		`<div class="notice"><p>Explore related questions</p></div><h3>Post as a guest</h3><p>Required, but never shown</p></main>`
	qa := `<html><head><script type="application/ld+json">{"@type":"QAPage","mainEntity":{"@type":"Question"}}</script></head><body>` + body + `</body></html>`
	got, err := cleanString(t, qa, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "get a dobsonian") || !strings.Contains(got, "need no collimation") || !strings.Contains(got, "Which mount") {
		t.Errorf("lost a post: %s", got)
	}
	for _, gone := range []string{"Click to expand", "Last edited", "Explore related", "Post as a guest", "never shown", "hours ago", "Oct 1", "wrote on", "Thread Starter"} {
		if strings.Contains(got, gone) {
			t.Errorf("kept %q: %s", gone, got)
		}
	}
	got, err = cleanString(t, `<html><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Last edited") {
		t.Errorf("a page that is not a thread lost its edit note: %s", got)
	}
}

// A poster card's lines written across inline elements ("Join Date:
// <b>Aug 2008</b>") and its location and registration fields go on a
// thread; "Location: London" on a page that is not one stays.
func TestPosterLinesAcrossElements(t *testing.T) {
	t.Parallel()
	post := func(text string) string {
		return `<div class="post"><div class="card"><div>Join Date: <b>Aug 2008</b></div><div>Location: <b>SIN</b></div>` +
			`<dl><dd><span>Registered:</span> 2024-01-27</dd></dl></div><div class="body"><p>` + strings.Repeat(text+" ", 5) + `</p></div></div>`
	}
	body := `<main><h1>Which first telescope?</h1>` + post("A reflector gives the most aperture for the money, get a dobsonian.") +
		post("Refractors need no collimation, which beginners appreciate on cold nights.") + `</main>`
	forum := `<html><head><script type="application/ld+json">{"@type":"DiscussionForumPosting","headline":"Which first telescope?"}</script></head><body>` + body + `</body></html>`
	got, err := cleanString(t, forum, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "get a dobsonian") || !strings.Contains(got, "need no collimation") {
		t.Errorf("lost a post: %s", got)
	}
	for _, gone := range []string{"Join Date", "Aug 2008", "Location", "Registered", "2024-01-27"} {
		if strings.Contains(got, gone) {
			t.Errorf("kept %q: %s", gone, got)
		}
	}
	got, err = cleanString(t, `<html><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Location") {
		t.Errorf("a page that is not a thread lost a location field: %s", got)
	}
}

// On a thread a post's signature goes also when its class runs the word
// together with another ("postsignature"), and so do the poster's contact
// links; a page that is not a thread keeps such a block.
func TestThreadSignatures(t *testing.T) {
	t.Parallel()
	post := func(text, sig string) string {
		return `<div class="blockpost"><div class="postleft"><dl><dt>ann</dt><dd class="usercontacts"><a href="https://example.org/ann">Website</a></dd></dl></div>` +
			`<div class="postright"><div class="postmsg"><p>` + strings.Repeat(text+" ", 5) + `</p></div><div class="postsignature postmsg"><p>` + strings.Repeat(sig+" ", 3) + `</p></div></div></div>`
	}
	body := `<main><h1>Which first telescope?</h1>` + post("A reflector gives the most aperture for the money, get a dobsonian.", "Keep looking up, the sky is patient with everyone who waits for it.") +
		post("Refractors need no collimation, which beginners appreciate on cold nights.", "Clear skies from the northern hills, where the seeing is steady most nights.") + `</main>`
	forum := `<html><head><script type="application/ld+json">{"@type":"DiscussionForumPosting","headline":"Which first telescope?"}</script></head><body>` + body + `</body></html>`
	got, err := cleanString(t, forum, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "get a dobsonian") || !strings.Contains(got, "need no collimation") {
		t.Errorf("lost a post: %s", got)
	}
	for _, gone := range []string{"sky is patient", "northern hills", "Website"} {
		if strings.Contains(got, gone) {
			t.Errorf("kept %q: %s", gone, got)
		}
	}
	got, err = cleanString(t, `<html><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "sky is patient") {
		t.Errorf("a page that is not a thread lost the block: %s", got)
	}
}

// The legal line under a sign-up form ("By continuing, you agree to our
// User Agreement...") goes on any page with the form's small box around it,
// also when it is the page's only paragraph and so its anchor; a long
// paragraph opening the same way stays.
func TestConsentLines(t *testing.T) {
	t.Parallel()
	consent := `<div class="fine-print"><span>By continuing, you agree to our <a href="/terms">User Agreement</a> and acknowledge that you understand the <a href="/privacy">Privacy Policy</a>.</span></div>`
	long := `<p>By clicking through the settings you agree, in effect, to a long list of defaults. ` + strings.Repeat("Each of them changes how the camera meters, focuses and stores its files, and most are worth a look. ", 4) + `</p>`
	page := `<html><body><main><h1>Camera settings</h1><p>` + strings.Repeat("The defaults suit most people, but three of them are worth changing on day one. ", 4) + `</p>` + long +
		`<aside class="signup"><h3>Join us</h3>` + consent + `</aside></main></body></html>`
	got, err := cleanString(t, page, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "User Agreement") || !strings.Contains(got, "long list of defaults") || !strings.Contains(got, "worth changing") {
		t.Errorf("consent line: %s", got)
	}
	// The only paragraph of a page (its anchor) is the consent line.
	only := `<html><body><main><h1>A post whose body did not load</h1></main><aside class="right-sidebar"><div class="box"><span>New here?</span><p>Create your account.</p>` + consent + `</div></aside></body></html>`
	got, err = cleanString(t, only, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "User Agreement") || strings.Contains(got, "New here") || strings.Contains(got, "Create your account") ||
		strings.Contains(got, `class="box"`) || !strings.Contains(got, "did not load") {
		t.Errorf("consent line as the anchor, or its box: %s", got)
	}
}

// The controls beside each post of a thread ("save", "embed", "parent")
// and a code box's "Code: Select all" go on a thread; the same link texts on a page that is not one stay.
func TestPostControlLinks(t *testing.T) {
	t.Parallel()
	post := func(text string) string {
		return `<div class="entry"><div class="md"><p>` + strings.Repeat(text+" ", 5) + `</p><div class="codebox"><p>Code: <a href="#">Select all</a></p><pre><code>focus --step 3</code></pre></div></div><p class="byline">posted by ann on the northern hills observatory board, <a href="/p/1">embed</a> <a href="#s">save</a> <a href="#p">parent</a></p></div>`
	}
	body := `<main><h1>Which first telescope?</h1>` + post("A reflector gives the most aperture for the money, get a dobsonian.") +
		post("Refractors need no collimation, which beginners appreciate on cold nights.") + `</main>`
	forum := `<html><head><script type="application/ld+json">{"@type":"DiscussionForumPosting","headline":"Which first telescope?"}</script></head><body>` + body + `</body></html>`
	got, err := cleanString(t, forum, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "get a dobsonian") || !strings.Contains(got, "need no collimation") {
		t.Errorf("lost a post: %s", got)
	}
	for _, gone := range []string{">embed<", ">save<", ">parent<", "Select all", "Code:"} {
		if strings.Contains(got, gone) {
			t.Errorf("kept %q: %s", gone, got)
		}
	}
	got, err = cleanString(t, `<html><body>`+body+`</body></html>`, Options{OnlyMainContent: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, ">embed<") {
		t.Errorf("a page that is not a thread lost the link: %s", got)
	}
}
