// Package browser renders pages in headless Chrome through chromedp: one
// Chrome process per Pool (started lazily, restarted when it dies, or a
// remote one over the DevTools protocol), a bounded number of tabs with a
// ctx-bounded queue, navigation with a smart wait, emulation (mobile,
// language, timezone), ad blocking, an SSRF guard on every request the page
// makes, screenshots and the API's page actions (see internal/actions).
//
// Each Render gets a tab of its own in a browser context of its own (no
// cookies or storage shared between renders) and carries the request's
// deadline; after it the tab is reset for the next render or closed (see
// tab.go). The package parses no HTML.
package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/firegate/firegate/internal/fairshare"
	"github.com/firegate/firegate/internal/netguard"
)

// Errors returned by Render. Deadline errors also match
// context.DeadlineExceeded; DNS and TLS errors also match ErrNavigation.
var (
	// ErrUnavailable means no Chrome is configured or it could not start.
	ErrUnavailable = errors.New("browser: chrome unavailable")
	// ErrTimeout means a deadline ended the render.
	ErrTimeout = errors.New("browser: timeout")
	// ErrBlocked means the page's URL resolves to a non-public address and
	// private targets are not allowed.
	ErrBlocked = errors.New("browser: target address is not public")
	// ErrNavigation means Chrome could not load the page; the error text
	// carries Chrome's net::ERR_... code.
	ErrNavigation = errors.New("browser: navigation failed")
	// ErrDNS is a navigation failure because the host did not resolve.
	ErrDNS = errors.New("browser: dns resolution failed")
	// ErrTLS is a navigation failure because of the certificate or the TLS
	// handshake.
	ErrTLS = errors.New("browser: tls error")
	// ErrProxy is a navigation failure because the render's outbound proxy
	// (Request.Proxy) failed: it could not be reached or refused the
	// handshake or the credentials.
	ErrProxy = errors.New("browser: proxy failed")
)

// Options configures a Pool.
type Options struct {
	// ChromePath is the Chrome binary (CHROME_PATH); empty means the first
	// of chromium-headless-shell, headless-shell, chromium, chromium-browser,
	// google-chrome, google-chrome-stable on
	// PATH.
	ChromePath string
	// RemoteURL (BROWSER_WS_URL) connects to a running Chrome instead of
	// starting one: a ws:// DevTools URL or an http:// address serving
	// /json/version.
	RemoteURL string
	// MaxTabs (BROWSER_MAX_TABS) bounds the tabs open at once; more renders
	// wait, bounded by their ctx. 0 means 2 per CPU, at least 2. The tabs
	// are shared fairly between teams (internal/fairshare): a team may use
	// what the others leave idle but for the last quarter of the tabs (at
	// least one; none with a single tab), which only another team takes,
	// and a freed tab goes to the waiting team that holds the fewest.
	MaxTabs int
	// MaxHold (BROWSER_MAX_TAB_HOLD) bounds how long one Render holds its
	// tab in all, from the moment it gets it, Chrome's restarts included;
	// past it the render fails with ErrTimeout. 0 means DefaultMaxHold.
	MaxHold time.Duration
	// Policy is the network policy every connection of Chrome passes,
	// through the guarded proxy. Nil means one built from AllowPrivate.
	Policy *netguard.Policy
	// AllowPrivate, when Policy is nil, admits every address (tests and
	// local use); false refuses what is not globally reachable.
	AllowPrivate bool
	// ProxyListen is where the guarded proxy listens; empty means a free
	// port on 127.0.0.1, which a local Chrome reaches. A remote Chrome
	// (RemoteURL) needs an address it can reach (BROWSER_PROXY_LISTEN).
	ProxyListen string
	// ProxyURL is the proxy's URL as Chrome reaches it; empty means
	// http://<the listen address> for a local Chrome. For a remote Chrome
	// without a ProxyURL its traffic is not proxied: only the in-page
	// guard (address literals, *.localhost, schemes) applies.
	ProxyURL string
	// UserDataDir is the parent directory of Chrome's profile directory;
	// empty means the system temp dir.
	UserDataDir string
	// AdHosts replaces the bundled ad and tracker block list (tests use
	// it); nil means the bundled list.
	AdHosts []string
	// DevTools opens a second DevTools endpoint for the CDP proxy of
	// interact sessions (Session.DevTools), which gives each of its
	// clients a connection of its own: a local Chrome listens on a random
	// port of 127.0.0.1 besides the pipe the pool drives it by; a remote
	// Chrome is reached again at RemoteURL when that is a ws:// URL and
	// its traffic is proxied (ProxyURL).
	DevTools bool
	// MaxMessage bounds one DevTools message the pool reads from Chrome
	// (see pipe.go); 0 means DefaultMaxMessage.
	MaxMessage int
}

// Pool owns one Chrome and hands out tabs. Its methods are safe for
// concurrent use.
type Pool struct {
	opts    Options
	log     *slog.Logger
	tabs    *fairshare.Pool // the render slots, by team
	adHosts []string
	// closing tracks tabs being closed after their render returned.
	closing sync.WaitGroup
	policy  *netguard.Policy
	proxy   *netguard.Proxy
	// proxyURL is the guarded proxy Chrome uses ("" = none).
	proxyURL string
	// refused remembers the hosts the proxy recently refused, to name a
	// failed navigation.
	refused refusals
	// direct makes a local Chrome connect by itself, without the proxy:
	// only benchmarks set it, to measure what the proxy costs.
	direct bool

	mu     sync.Mutex
	inst   *instance
	closed bool
	// current mirrors inst for Stats and Ping, which must not wait for mu
	// while Chrome starts.
	current atomic.Pointer[instance]
}

// instance is one running (or attached) Chrome.
type instance struct {
	ctx         context.Context // root chromedp context; done when Chrome is gone
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	dataDir     string // profile dir we created, removed on stop
	userAgent   string // Chrome's UA with "Headless" removed
	major       string // Chrome's major version
	slots       *slots // browser contexts, idle or in use
	// devtools is the browser's ws:// DevTools URL for connections other
	// than the pool's own; "" when there is none (Options.DevTools).
	devtools string
	// bySession holds the pool's open tabs by DevTools session, for the
	// pipe filter's reports (target.SessionID -> *tab).
	bySession sync.Map
	// pages counts the pages of the sessions' contexts (pages.go).
	pages sessionPages
}

// startTimeout bounds starting Chrome or connecting to it.
const startTimeout = 30 * time.Second

// stopTimeout bounds the graceful close of Chrome.
const stopTimeout = 10 * time.Second

// New returns a Pool. It does not start Chrome: the first Render does.
func New(opts Options, log *slog.Logger) *Pool {
	if opts.MaxTabs <= 0 {
		opts.MaxTabs = max(2, 2*runtime.NumCPU())
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = DefaultMaxMessage
	}
	if opts.MaxHold <= 0 {
		opts.MaxHold = DefaultMaxHold
	}
	tabs, _ := fairshare.New(fairshare.Config{Slots: opts.MaxTabs, MaxPerKey: perTeam(opts.MaxTabs)}) // MaxTabs >= 1: cannot fail
	hosts := opts.AdHosts
	if hosts == nil {
		hosts = parseHosts(defaultAdHosts)
	}
	policy := opts.Policy
	if policy == nil {
		policy, _ = netguard.New(netguard.Options{AllowAll: opts.AllowPrivate}) // no Allow entries: cannot fail
	}
	return &Pool{
		opts:    opts,
		log:     log,
		tabs:    tabs,
		adHosts: hosts,
		policy:  policy,
		refused: refusals{m: map[string]refusal{}},
	}
}

// startProxy starts the guarded proxy once per Pool; it outlives Chrome
// restarts. p.mu is held.
func (p *Pool) startProxy() error {
	if p.proxy != nil || p.direct {
		return nil
	}
	if p.opts.RemoteURL != "" && p.opts.ProxyURL == "" {
		p.log.Warn("remote chrome without BROWSER_PROXY_URL: its connections are not guarded by the network policy, only requests to address literals and *.localhost are refused")
		return nil
	}
	listen := p.opts.ProxyListen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	px := netguard.NewProxy(p.policy, netguard.ProxyOptions{OnRefuse: p.refused.note}, p.log)
	addr, err := px.Start(listen)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	p.proxy = px
	p.proxyURL = p.opts.ProxyURL
	if p.proxyURL == "" {
		p.proxyURL = "http://" + addr
	}
	return nil
}

// chromeNames are the executables looked up on PATH, in order. Debian's
// headless shell comes first by its real path: its /usr/bin wrapper is a
// shell script that does not exec it, so the process the pool watches
// would not be Chrome.
func chromeNames() []string {
	return []string{"/usr/lib/chromium/chromium-headless-shell", "chromium-headless-shell", "headless-shell", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
}

// chromePath returns the configured or discovered Chrome binary.
func (p *Pool) chromePath() (string, error) {
	if p.opts.ChromePath != "" {
		path, err := exec.LookPath(p.opts.ChromePath)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		return path, nil
	}
	for _, name := range chromeNames() {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("%w: none of %s on PATH", ErrUnavailable, strings.Join(chromeNames(), ", "))
}

// Available returns nil when a remote Chrome is configured or a Chrome
// binary is found; otherwise an error wrapping ErrUnavailable.
func (p *Pool) Available() error {
	if p.opts.RemoteURL != "" {
		return nil
	}
	_, err := p.chromePath()
	return err
}

// MaxTabs returns the number of tabs the pool opens at once.
func (p *Pool) MaxTabs() int { return p.opts.MaxTabs }

// DefaultMaxHold is Options.MaxHold when it is 0: the longest waits a
// request may ask for (waitFor and wait actions together, 60 s) and the
// time to load and act on a slow page.
const DefaultMaxHold = 120 * time.Second

// perTeam is the most tabs one team holds at once out of n: all but a
// quarter (at least one), so that another team's render starts at once
// however long one team's renders are; all of a single tab.
func perTeam(n int) int {
	if n < 2 {
		return n
	}
	return n - max(1, n/4)
}

// Stats is a snapshot of a Pool, for metrics and readiness.
type Stats struct {
	// InUse is the renders holding a tab now (waiting ones excluded).
	InUse int
	// MaxTabs bounds InUse.
	MaxTabs int
	// Started reports that Chrome runs (or a remote one is attached);
	// Chrome starts on the first render and restarts on the next one after
	// dying.
	Started bool
}

// Stats returns the pool's current numbers without waiting on a start.
func (p *Pool) Stats() Stats {
	inst := p.current.Load()
	return Stats{InUse: p.tabs.Stats().InUse, MaxTabs: p.opts.MaxTabs, Started: inst != nil && inst.ctx.Err() == nil}
}

// ErrNotStarted is returned by Ping when no Chrome runs yet (or the last
// one died); the next render starts one.
var ErrNotStarted = errors.New("browser: chrome not started")

// Ping checks that the running Chrome answers a version request within
// ctx. It never starts Chrome: without a running one it returns an error
// wrapping ErrNotStarted.
func (p *Pool) Ping(ctx context.Context) error {
	inst := p.current.Load()
	if inst == nil || inst.ctx.Err() != nil {
		return ErrNotStarted
	}
	c := chromedp.FromContext(inst.ctx)
	if c == nil || c.Browser == nil {
		return ErrNotStarted
	}
	if _, err := cdp.Call(ctx, c.Browser, cdpbrowser.GetVersion, cdp.Empty{}); err != nil {
		return fmt.Errorf("browser: ping: %w", err)
	}
	return nil
}

// Close stops Chrome (or disconnects from a remote one) and waits for its
// processes to exit. Renders after Close fail with ErrUnavailable.
func (p *Pool) Close() error {
	p.closing.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var err error
	if p.inst != nil {
		err = p.stop(p.inst)
		p.inst = nil
		p.current.Store(nil)
	}
	if p.proxy != nil {
		if perr := p.proxy.Close(); perr != nil && err == nil {
			err = fmt.Errorf("browser: close proxy: %w", perr)
		}
		p.proxy = nil
	}
	return err
}

// stop closes Chrome gracefully, then kills what is left and removes the
// profile directory.
func (p *Pool) stop(inst *instance) error {
	var err error
	if p.opts.RemoteURL != "" {
		// A remote Chrome keeps running: leave nothing of ours in it.
		for _, s := range inst.slots.drain() {
			p.disposeSlot(inst.ctx, inst, s)
		}
	}
	if inst.ctx.Err() == nil {
		sctx, cancel := context.WithTimeout(inst.ctx, stopTimeout)
		err = chromedp.Cancel(sctx)
		cancel()
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			err = nil // killed below
		}
	}
	inst.cancel()
	inst.allocCancel()
	if inst.dataDir != "" {
		if rerr := os.RemoveAll(inst.dataDir); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("browser: close chrome: %w", err)
	}
	return nil
}

// instance returns the running Chrome, starting (or restarting) it.
func (p *Pool) instance(ctx context.Context) (*instance, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, fmt.Errorf("%w: pool closed", ErrUnavailable)
	}
	if p.inst != nil {
		if p.inst.ctx.Err() == nil && p.alive(p.inst) {
			return p.inst, nil
		}
		p.log.WarnContext(ctx, "chrome is gone, restarting")
		if err := p.stop(p.inst); err != nil {
			p.log.WarnContext(ctx, "stop dead chrome", "err", err)
		}
		p.inst = nil
		p.current.Store(nil)
	}
	if err := p.startProxy(); err != nil {
		return nil, err
	}
	inst, err := p.start(ctx)
	if err != nil {
		return nil, err
	}
	p.inst = inst
	p.current.Store(inst)
	return inst, nil
}

// alive reports whether a local Chrome process still runs.
func (p *Pool) alive(inst *instance) bool {
	c := chromedp.FromContext(inst.ctx)
	if c == nil || c.Browser == nil {
		return false
	}
	proc := c.Browser.Process()
	if proc == nil {
		return true // remote
	}
	return proc.Signal(syscall.Signal(0)) == nil
}

// proxyFlags send every connection of a local Chrome through the guarded
// proxy: loopback is not exempt (Chrome bypasses proxies for it by
// default), QUIC is off (it would be UDP, past an HTTP proxy), WebRTC may
// use no UDP the proxy does not carry, and there is no DNS prefetching
// (names are resolved only by the proxy).
func proxyFlags(proxyURL string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ProxyServer(proxyURL),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("dns-prefetch-disable", true),
	}
}

// chromeFlags are the flags of a local Chrome. Never --single-process or
// --no-zygote: they crash this Chromium. The GPU thread runs in the browser
// process (one process less, about 50 MB). Sharing renderers (a process
// limit, process-per-site) was measured with cmd/browserbench: fewer
// processes, but one renderer then holds every page and grows, and the
// total was no smaller, so each tab keeps its own. Site isolation is off so that
// cross-site iframes stay in the page's process, where the request guard
// sees their requests. The back/forward cache would keep the page a reused
// tab left alive; the omnibox WebUI features preload a renderer per window
// (one per slot) that a headless Chrome never shows.
func chromeFlags() []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.Flag("headless", "new"),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-features", "Translate,OptimizationHints,MediaRouter,IsolateOrigins,site-per-process,BackForwardCache,WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup,PreloadTopChromeWebUI"),
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-hang-monitor", true),
		chromedp.Flag("disable-popup-blocking", true),
		chromedp.Flag("disable-prompt-on-repost", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("safebrowsing-disable-auto-update", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("in-process-gpu", true),
	}
}

// start launches Chrome (or attaches to the remote one) and waits until it
// answers, bounded by startTimeout and ctx.
func (p *Pool) start(ctx context.Context) (*instance, error) {
	base := context.WithoutCancel(ctx) // Chrome outlives the request
	inst := &instance{slots: newSlots(p.opts.MaxTabs + 1)}
	var allocCtx context.Context
	filter := &msgFilter{max: int64(p.opts.MaxMessage), onDrop: func(o oversized) { p.oversized(inst, o) }}
	if p.opts.RemoteURL != "" {
		allocCtx, inst.allocCancel = chromedp.NewAllocatorContext(base, &remoteAllocator{url: p.opts.RemoteURL, filter: filter})
	} else {
		path, err := p.chromePath()
		if err != nil {
			return nil, err
		}
		if p.opts.UserDataDir != "" {
			if err := os.MkdirAll(p.opts.UserDataDir, 0o700); err != nil {
				return nil, fmt.Errorf("%w: profile dir: %v", ErrUnavailable, err)
			}
		}
		dir, err := os.MkdirTemp(p.opts.UserDataDir, "firegate-chrome-")
		if err != nil {
			return nil, fmt.Errorf("%w: profile dir: %v", ErrUnavailable, err)
		}
		inst.dataDir = dir
		opts := append(chromeFlags(), chromedp.ExecPath(path), chromedp.UserDataDir(dir))
		if p.proxyURL != "" {
			opts = append(opts, proxyFlags(p.proxyURL)...)
		}
		opts = append(opts, startCmd(filter, p.proxyURL != "" && p.opts.DevTools))
		allocCtx, inst.allocCancel = chromedp.NewExecAllocator(base, opts...)
	}
	inst.ctx, inst.cancel = chromedp.NewContext(allocCtx,
		chromedp.WithErrorf(func(format string, args ...any) {
			p.log.Debug("chromedp error", "msg", fmt.Sprintf(format, args...))
		}))

	started := make(chan error, 1)
	go func() { started <- chromedp.Do(inst.ctx) }()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	var err error
	select {
	case err = <-started:
	case <-timer.C:
		err = errors.New("start timed out")
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err == nil {
		err = filter.failed()
	}
	if err == nil {
		err = p.readVersion(ctx, inst)
	}
	if err == nil {
		err = p.watchTargets(ctx, inst)
	}
	if err == nil && p.opts.DevTools && p.proxyURL != "" {
		p.devToolsURL(ctx, inst)
	}
	if err != nil {
		inst.cancel()
		inst.allocCancel()
		if inst.dataDir != "" {
			_ = os.RemoveAll(inst.dataDir)
		}
		if ctx.Err() != nil {
			return nil, ctxError("start chrome", ctx.Err())
		}
		return nil, fmt.Errorf("%w: start: %v", ErrUnavailable, err)
	}
	p.log.InfoContext(ctx, "chrome started", "remote", p.opts.RemoteURL != "", "user_agent", inst.userAgent, "max_tabs", p.opts.MaxTabs)
	return inst, nil
}

// readVersion fills the instance's user agent from Chrome.
func (p *Pool) readVersion(ctx context.Context, inst *instance) error {
	c := chromedp.FromContext(inst.ctx)
	vctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	v, err := cdp.Call(vctx, c.Browser, cdpbrowser.GetVersion, cdp.Empty{})
	if err != nil {
		return err
	}
	inst.userAgent = strings.Replace(v.UserAgent, "HeadlessChrome/", "Chrome/", 1)
	_, prod, _ := strings.Cut(v.Product, "/")
	inst.major, _, _ = strings.Cut(prod, ".")
	return nil
}

// ctxError converts a context error into the package's errors: a deadline
// becomes ErrTimeout (still matching context.DeadlineExceeded).
func ctxError(stage string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("browser: %s: %w: %w", stage, ErrTimeout, context.DeadlineExceeded)
	}
	return fmt.Errorf("browser: %s: %w", stage, err)
}

// startCmd prepares the command of a local Chrome: its DevTools pipe goes
// through filter, and with devTools it listens for DevTools connections
// on a random port of 127.0.0.1 too (it keeps the pipe the pool uses; the
// flag goes on the command line directly: as an allocator flag it would
// make chromedp connect by websocket instead of the pipe). Replacing
// chromedp's command hook, it keeps what that hook does on Linux: Chrome
// dies with this process.
func startCmd(filter *msgFilter, devTools bool) chromedp.ExecAllocatorOption {
	return chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
		if devTools {
			cmd.Args = append(cmd.Args, "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1")
		}
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = new(syscall.SysProcAttr)
		}
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		filter.interpose(cmd)
	})
}

// oversized fails the render of the tab a message over the bound was
// for; a session's tab goes on without the message.
func (p *Pool) oversized(inst *instance, o oversized) {
	v, ok := inst.bySession.Load(o.sessionID)
	if !ok || o.sessionID == "" {
		p.log.Warn("devtools message over the limit dropped", "what", o.what(), "bytes", o.size, "limit", o.limit)
		return
	}
	tb := v.(*tab)
	if !tb.abortRender(o) {
		p.log.Warn("devtools message over the limit dropped", "what", o.what(), "bytes", o.size, "limit", o.limit, "target", tb.id)
	}
}

// devToolsWait bounds waiting for a local Chrome to write its DevTools
// port.
const devToolsWait = 5 * time.Second

// devToolsURL notes the instance's DevTools URL: for a local Chrome, from
// the DevToolsActivePort file it writes in its profile directory (port,
// then path); for a remote one, RemoteURL when it is a ws:// URL. Without
// one, sessions have no DevTools endpoint (logged).
func (p *Pool) devToolsURL(ctx context.Context, inst *instance) {
	if p.opts.RemoteURL != "" {
		if strings.HasPrefix(p.opts.RemoteURL, "ws://") || strings.HasPrefix(p.opts.RemoteURL, "wss://") {
			inst.devtools = p.opts.RemoteURL
		} else {
			p.log.WarnContext(ctx, "BROWSER_WS_URL is not a ws:// URL: interact sessions have no cdpUrl")
		}
		return
	}
	file := filepath.Join(inst.dataDir, "DevToolsActivePort")
	deadline := time.Now().Add(devToolsWait)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(file); err == nil {
			port, path, ok := strings.Cut(strings.TrimSpace(string(b)), "\n")
			if n, err := strconv.Atoi(port); ok && err == nil && n > 0 && n < 65536 && strings.HasPrefix(path, "/devtools/browser/") {
				// No page, scrape or webhook may reach it, whatever
				// ALLOW_PRIVATE_TARGETS or ALLOW_TARGETS admit.
				p.policy.Reserve(uint16(n))
				inst.devtools = "ws://127.0.0.1:" + port + path
				return
			}
		}
		if time.Now().After(deadline) {
			p.log.WarnContext(ctx, "chrome wrote no DevTools port: interact sessions have no cdpUrl", "file", file)
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}
