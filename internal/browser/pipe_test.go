package browser

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/testenv"
)

// TestPipeFilter feeds the filter messages as Chrome writes them: those
// within the bound pass as they are, a response over it becomes an error
// response of its id and session, an event over it is dropped; each one
// over is reported.
func TestPipeFilter(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 3000)
	in := []string{
		`{"id":1,"result":{}}`,
		`{"id":2,"result":{"result":{"type":"string","value":"` + big + `"}},"sessionId":"AB12CD"}`,
		`{"method":"Runtime.consoleAPICalled","params":{"args":[{"value":"` + big + `"}]},"sessionId":"EF34"}`,
		`{"id":3,"result":{"targetInfo":{"sessionId":"X","url":"` + big + `"}}}`,
		`{"method":"Page.frameStoppedLoading","params":{"frameId":"F"},"sessionId":"EF34"}`,
	}
	var mu sync.Mutex
	var drops []oversized
	f := &msgFilter{max: 1000, onDrop: func(o oversized) {
		mu.Lock()
		drops = append(drops, o)
		mu.Unlock()
	}}
	chromeR, chromeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	dpR, dpW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { f.answers(chromeR, dpW); close(done) }()
	go func() {
		for _, m := range in {
			_, _ = chromeW.Write(append([]byte(m), 0))
		}
		chromeW.Close()
	}()
	out, err := io.ReadAll(dpR)
	if err != nil {
		t.Fatal(err)
	}
	<-done
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	want := []string{
		in[0],
		`{"id":2,"error":{"code":-32000,"message":"firegate: Chrome sent the answer to a command of ` + fmt.Sprint(len(in[1])) + ` bytes for the page, over the limit of 1000 bytes"},"sessionId":"AB12CD"}`,
		`{"id":3,"error":{"code":-32000,"message":"firegate: Chrome sent the answer to a command of ` + fmt.Sprint(len(in[3])) + ` bytes for the page, over the limit of 1000 bytes"}}`,
		in[4],
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages passed on (-want +got):\n%s", diff)
	}
	wantDrops := []oversized{
		{sessionID: "AB12CD", id: 2, size: int64(len(in[1])), limit: 1000},
		{sessionID: "EF34", method: "Runtime.consoleAPICalled", size: int64(len(in[2])), limit: 1000},
		{id: 3, size: int64(len(in[3])), limit: 1000},
	}
	if diff := cmp.Diff(wantDrops, drops, cmp.AllowUnexported(oversized{})); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if !errors.Is(drops[0], ErrMessageTooLarge) {
		t.Error("a report does not match ErrMessageTooLarge")
	}
}

func TestMessageHeadAndSession(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		msg     string
		id      int64
		method  string
		session string
	}{
		{`{"id":17,"result":{},"sessionId":"9F8E"}`, 17, "", "9F8E"},
		{` { "id" : 5 ,"result":{}}`, 5, "", ""},
		{`{"method":"Fetch.requestPaused","params":{}}`, 0, "Fetch.requestPaused", ""},
		{`{"method":"Page.x","params":{"sessionId":"IN"}}`, 0, "Page.x", ""},
		{`{"result":{},"id":3}`, 0, "", ""},
		{`{"id":-1}`, 0, "", ""},
		{`{"method":"a\"b"}`, 0, "", ""},
		{`{"id":1,"result":{"v":"\",\"sessionId\":\"S\"}`, 1, "", ""},
		{`[1]`, 0, "", ""},
	} {
		id, method := messageHead([]byte(c.msg))
		session := messageSession([]byte(c.msg))
		if id != c.id || method != c.method || string(session) != c.session {
			t.Errorf("%s: id %d method %q session %q, want %d %q %q", c.msg, id, method, session, c.id, c.method, c.session)
		}
	}
}

// TestRenderBoundsDevToolsMessages renders through a pool whose bound on
// a DevTools message is 1 MB: a page of 2 MB and a page that posts 2 MB
// fail at once, naming the limit (the first because the answer to reading
// it is over the bound, the second because the event of its paused
// request is, which would otherwise hold the request until the timeout),
// and the pool serves the next render as before. It starts a Chrome of its own.
func TestRenderBoundsDevToolsMessages(t *testing.T) {
	t.Parallel()
	p := New(Options{ChromePath: testenv.ChromePath(t), MaxTabs: 2, AllowPrivate: true, MaxMessage: 1 << 20}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	s := newSite(t, map[string]string{
		"/small": `<html><body><p>` + strings.Repeat("s", 500<<10) + `</p></body></html>`,
		"/big":   `<html><body><p>` + strings.Repeat("b", 2<<20) + `</p></body></html>`,
		"/post":  `<html><body><p>ok</p><script>fetch('/echo', {method: 'POST', body: 'p'.repeat(2 << 20)})</script></body></html>`,
	}, nil)
	ctx := testCtx(t, 90*time.Second)
	for _, path := range []string{"/big", "/post"} {
		start := time.Now()
		_, err := p.Render(ctx, Request{URL: s.URL + path})
		if !errors.Is(err, ErrMessageTooLarge) || !errors.Is(err, ErrNavigation) || !strings.Contains(err.Error(), "over the limit of 1048576 bytes") {
			t.Errorf("%s: err %v, want ErrMessageTooLarge naming the limit", path, err)
		}
		if d := time.Since(start); d > testenv.Patient(20*time.Second) {
			t.Errorf("%s: failed after %v, not at once", path, d)
		}
	}
	res, err := p.Render(ctx, Request{URL: s.URL + "/small"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains([]byte(res.HTML), []byte(strings.Repeat("s", 500<<10))) {
		t.Errorf("the page within the bound lost its text: %d bytes of HTML", len(res.HTML))
	}
}

// BenchmarkPipeFilter passes 64 KB messages (a page's HTML) from a pipe
// as Chrome writes them to a reader as chromedp reads them, through the
// filter and directly: the difference is what the filter adds to each
// DevTools message of a local Chrome.
func BenchmarkPipeFilter(b *testing.B) {
	msg := append([]byte(`{"id":1,"result":{"result":{"type":"string","value":"`+strings.Repeat("h", 64<<10)+`"}},"sessionId":"AB"}`), 0)
	for _, filtered := range []bool{true, false} {
		name := "direct"
		if filtered {
			name = "filter"
		}
		b.Run(name, func(b *testing.B) {
			chromeR, chromeW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			dpR := chromeR
			if filtered {
				var dpW *os.File
				if dpR, dpW, err = os.Pipe(); err != nil {
					b.Fatal(err)
				}
				f := &msgFilter{max: DefaultMaxMessage}
				go f.answers(chromeR, dpW)
			}
			done := make(chan error, 1)
			go func() {
				br := bufio.NewReader(dpR)
				for range b.N {
					if _, err := br.ReadBytes(0); err != nil {
						done <- err
						return
					}
				}
				done <- nil
			}()
			b.SetBytes(int64(len(msg)))
			b.ResetTimer()
			for range b.N {
				if _, err := chromeW.Write(msg); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			chromeW.Close()
			dpR.Close()
		})
	}
}

// TestRenderRemoteChromeBoundsMessages: a remote Chrome, reached by its
// http:// address, is read through the same bound: a page over it fails
// naming the limit, and the connection serves the next render.
func TestRenderRemoteChromeBoundsMessages(t *testing.T) {
	t.Parallel()
	_, port, _ := startRemoteChrome(t)
	p := New(Options{RemoteURL: "http://localhost:" + port, AllowPrivate: true, MaxTabs: 2, MaxMessage: 1 << 20}, testenv.Logger(t))
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	s := newSite(t, map[string]string{
		"/small": `<html><body><p>` + strings.Repeat("s", 500<<10) + `</p></body></html>`,
		"/big":   `<html><body><p>` + strings.Repeat("b", 2<<20) + `</p></body></html>`,
	}, nil)
	ctx := testCtx(t, 60*time.Second)
	_, err := p.Render(ctx, Request{URL: s.URL + "/big"})
	if !errors.Is(err, ErrMessageTooLarge) || !strings.Contains(err.Error(), "over the limit of 1048576 bytes") {
		t.Errorf("err %v, want ErrMessageTooLarge naming the limit", err)
	}
	res, err := p.Render(ctx, Request{URL: s.URL + "/small"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.HTML) < 500<<10 {
		t.Errorf("the page within the bound lost its text: %d bytes of HTML", len(res.HTML))
	}
}
