package browser

import (
	"context"
	"fmt"
	"strconv"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
)

// The stealth profile (Request.Stealth, proxy enhanced).
//
// A headless Chrome driven over DevTools shows it in the page: measured
// on the headless shell (TestBrowserSignals), navigator.webdriver is true,
// userAgentData has no brands once the User-Agent is overridden, there are
// no plugins or PDF mime types and no window.chrome, the window is the
// tab's 100x100 offscreen window while the viewport is 1920x1080, WebGL
// names SwiftShader, and Notification.permission says denied where the
// permission query says prompt. The full Chromium in its new headless
// mode has the plugins and window.chrome but the rest alike. Under the
// stealth profile the User-Agent metadata gives Chrome's brands (built as
// Chromium builds them for its major version), the desktop viewport is a
// maximised window's (1920x955 in a 1920x1040 window on a 1920x1080
// screen with a 40 px panel), and stealthScript, run before the page's
// own scripts in every frame, sets the rest. What it cannot hide: the
// getters it installs are not native functions (their toString shows
// it), workers still see the headless navigator, and canvas and audio
// output are SwiftShader's.

// Stealth sizes of a desktop render.
const (
	stealthScreenW, stealthScreenH = 1920, 1080
	stealthPanel                   = 40 // the desktop's panel: avail = screen - panel
	stealthChrome                  = 85 // tabs and address bar: inner = outer - chrome
)

// stealthViewport is the viewport of a stealth desktop render.
func stealthViewport() Viewport {
	return Viewport{Width: stealthScreenW, Height: stealthScreenH - stealthPanel - stealthChrome}
}

// stealthScript hides the headless signals in every frame of the page.
// %d are the screen's height, the panel and the window chrome.
const stealthScript = `(() => {
  const def = (o, k, get) => { try { Object.defineProperty(o, k, {get, configurable: true, enumerable: true}); } catch (e) {} };
  def(Navigator.prototype, 'webdriver', () => false);
  if (navigator.plugins.length === 0) {
    const mimes = [['application/pdf', 'pdf', 'Portable Document Format'], ['text/pdf', 'pdf', 'Portable Document Format']];
    const names = ['PDF Viewer', 'Chrome PDF Viewer', 'Chromium PDF Viewer', 'Microsoft Edge PDF Viewer', 'WebKit built-in PDF'];
    const mk = (proto, props) => { const o = Object.create(proto); for (const [k, v] of Object.entries(props)) Object.defineProperty(o, k, {value: v, enumerable: true}); return o; };
    const mimeList = mimes.map(([type, suffixes, description]) => mk(MimeType.prototype, {type, suffixes, description}));
    const plugins = names.map(name => {
      const p = mk(Plugin.prototype, {name, filename: 'internal-pdf-viewer', description: 'Portable Document Format', length: mimeList.length});
      mimeList.forEach((m, i) => Object.defineProperty(p, i, {value: m}));
      p.item = i => mimeList[i] || null; p.namedItem = n => mimeList.find(m => m.type === n) || null;
      return p;
    });
    mimeList.forEach(m => Object.defineProperty(m, 'enabledPlugin', {value: plugins[0]}));
    const list = (proto, items, key) => {
      const o = Object.create(proto);
      items.forEach((it, i) => Object.defineProperty(o, i, {value: it, enumerable: true}));
      Object.defineProperty(o, 'length', {value: items.length});
      o.item = i => items[i] || null; o.namedItem = n => items.find(it => it[key] === n) || null; o.refresh = () => {};
      o[Symbol.iterator] = function* () { yield* items; };
      return o;
    };
    const pl = list(PluginArray.prototype, plugins, 'name'), ml = list(MimeTypeArray.prototype, mimeList, 'type');
    def(Navigator.prototype, 'plugins', () => pl);
    def(Navigator.prototype, 'mimeTypes', () => ml);
    def(Navigator.prototype, 'pdfViewerEnabled', () => true);
  }
  if (!window.chrome) {
    const now = () => Date.now() / 1000;
    window.chrome = {app: {isInstalled: false, InstallState: {DISABLED: 'disabled', INSTALLED: 'installed', NOT_INSTALLED: 'not_installed'}, RunningState: {CANNOT_RUN: 'cannot_run', READY_TO_RUN: 'ready_to_run', RUNNING: 'running'}},
      csi: () => ({startE: Date.now(), onloadT: Date.now(), pageT: performance.now(), tran: 15}),
      loadTimes: () => ({requestTime: now(), startLoadTime: now(), commitLoadTime: now(), finishDocumentLoadTime: now(), finishLoadTime: now(), firstPaintTime: now(), navigationType: 'Other', wasFetchedViaSpdy: true, wasNpnNegotiated: true, npnNegotiatedProtocol: 'h2', wasAlternateProtocolAvailable: false, connectionInfo: 'h2'})};
  }
  const mobile = %t;
  if (!mobile) {
    def(Screen.prototype, 'availHeight', () => screen.height - %d);
    def(Screen.prototype, 'availTop', () => 0);
    def(window, 'outerWidth', () => screen.availWidth);
    def(window, 'outerHeight', () => screen.availHeight);
    def(window, 'screenX', () => 0);
    def(window, 'screenY', () => 0);
  } else {
    def(window, 'outerWidth', () => window.innerWidth);
    def(window, 'outerHeight', () => window.innerHeight);
  }
  const swap = proto => {
    if (!proto) return;
    const get = proto.getParameter;
    proto.getParameter = function (p) {
      const v = get.call(this, p);
      if (p === 0x9245 && typeof v === 'string' && /SwiftShader|llvmpipe/i.test(String(get.call(this, 0x9246)))) return 'Google Inc. (Intel)';
      if (p === 0x9246 && typeof v === 'string' && /SwiftShader|llvmpipe/i.test(v)) return 'ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)';
      return v;
    };
  };
  swap(window.WebGLRenderingContext && WebGLRenderingContext.prototype);
  swap(window.WebGL2RenderingContext && WebGL2RenderingContext.prototype);
  if (window.Notification && Notification.permission === 'denied') {
    def(Notification, 'permission', () => 'default');
  }
})();`

// chromeMetadata is the User-Agent metadata of Chrome major on Linux
// (the platform the User-Agent names).
func chromeMetadata(major string, mobile bool) *emulation.UserAgentMetadata {
	n, _ := strconv.Atoi(major)
	var brands []*emulation.UserAgentBrandVersion
	for _, b := range chromeBrands(n) {
		brands = append(brands, &emulation.UserAgentBrandVersion{Brand: b[0], Version: b[1]})
	}
	md := &emulation.UserAgentMetadata{Brands: brands, Platform: "Linux", PlatformVersion: "", Architecture: "x86", Bitness: "64", Mobile: mobile}
	if mobile {
		md.Platform, md.Architecture, md.Bitness, md.Model = "Android", "", "", "K"
		md.PlatformVersion = "10.0.0"
	}
	return md
}

// chromeBrands is the brand list Chromium builds for its major version:
// a greased brand whose characters, version and place follow from it,
// Chromium and Google Chrome.
func chromeBrands(major int) [][2]string {
	if major <= 0 {
		return nil
	}
	chars := []string{" ", "(", ":", "-", ".", "/", ")", ";", "=", "?", "_"}
	versions := []string{"8", "99", "24"}
	list := [][2]string{
		{"Not" + chars[major%len(chars)] + "A" + chars[(major+1)%len(chars)] + "Brand", versions[major%len(versions)]},
		{"Chromium", strconv.Itoa(major)},
		{"Google Chrome", strconv.Itoa(major)},
	}
	orders := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	out := make([][2]string, 3)
	for i, pos := range orders[major%len(orders)] {
		out[pos] = list[i]
	}
	return out
}

// applyStealth installs the stealth script on the tab for this render.
func (p *Pool) applyStealth(ctx context.Context, tb *tab, mobile bool) error {
	res, err := cdp.Call(ctx, tb.t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: fmt.Sprintf(stealthScript, mobile, stealthPanel),
	})
	if err != nil {
		return fmt.Errorf("stealth script: %w", err)
	}
	tb.onReset(page.CommandRemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams(res))
	return nil
}
