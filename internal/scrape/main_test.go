package scrape

import (
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/media"
	"github.com/firegate/firegate/internal/testenv"
)

// One Chrome for the whole package, started on first use (STYLE.md §8).
var (
	poolOnce sync.Once
	pool     *browser.Pool
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pool != nil {
		pool.Close()
	}
	os.Exit(code)
}

// countingRenderer counts renders, to prove static pages never use Chrome.
type countingRenderer struct {
	*browser.Pool
	mu    sync.Mutex
	calls int
}

// browserEngine returns an engine with the shared Chrome and a media store
// in a temp dir; it skips (or fails under REQUIRE_INTEGRATION=1) without
// Chrome.
func browserEngine(t *testing.T) (*Engine, *countingRenderer) {
	t.Helper()
	path := testenv.ChromePath(t)
	poolOnce.Do(func() {
		pool = browser.New(browser.Options{ChromePath: path, AllowPrivate: true, MaxTabs: 4}, slog.New(slog.DiscardHandler))
	})
	ms, err := media.New(media.Options{Dir: t.TempDir()}, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	cr := &countingRenderer{Pool: pool}
	e := newEngine(t, true)
	e.browser, e.media = cr, ms
	e.mediaURL = func(id string) string { return "http://media.test/" + id }
	return e, cr
}
