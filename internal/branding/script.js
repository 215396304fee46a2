// Measures the rendered page for the branding format, in one evaluation.
// Returns a JSON string (see Raw in branding.go). Read-only: it changes
// nothing on the page. Bounded: at most 4000 elements are looked at.
(() => { try {
  const MAX_ELEMENTS = 4000, MAX_BUTTONS = 60, MAX_INPUTS = 12;
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 1;
  const g = canvas.getContext("2d", { willReadFrequently: true });
  // hex turns any CSS colour (rgb, hsl, oklch, color(), names) into
  // #rrggbbaa through the canvas; "" for none or fully transparent.
  const memo = new Map();
  const hex = (c) => {
    if (!c || c === "transparent" || c === "none") return "";
    if (memo.has(c)) return memo.get(c);
    g.clearRect(0, 0, 1, 1);
    g.fillStyle = "#000";
    g.fillStyle = c;
    g.fillRect(0, 0, 1, 1);
    const d = g.getImageData(0, 0, 1, 1).data;
    const out = d[3] === 0 ? "" : "#" + [d[0], d[1], d[2], d[3]].map((v) => v.toString(16).padStart(2, "0")).join("");
    memo.set(c, out);
    return out;
  };
  const px = (v) => { const n = parseFloat(v); return Number.isFinite(n) ? n : 0; };
  const visible = (el, cs) => {
    if (cs.display === "none" || cs.visibility === "hidden" || px(cs.opacity) === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width > 1 && r.height > 1;
  };
  const abs = (u) => { try { return u ? new URL(u, document.baseURI).href : ""; } catch { return ""; } };
  const count = (m, k, n = 1) => { if (k) m.set(k, (m.get(k) || 0) + n); };
  const top = (m, n) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([value, count]) => ({ value, count }));
  const text = (el) => (el.innerText || el.value || el.getAttribute("aria-label") || "").trim().slice(0, 60);

  const rootCS = getComputedStyle(document.documentElement);
  const body = document.body || document.documentElement;
  const bodyCS = getComputedStyle(body);
  const typo = (el) => {
    if (!el) return null;
    const cs = getComputedStyle(el);
    return { color: hex(cs.color), fontFamily: cs.fontFamily, fontSize: px(cs.fontSize), fontWeight: px(cs.fontWeight),
      lineHeight: cs.lineHeight === "normal" ? 0 : px(cs.lineHeight) };
  };
  const firstVisible = (sel) => {
    for (const el of document.querySelectorAll(sel)) { if (visible(el, getComputedStyle(el))) return el; }
    return null;
  };

  const out = {
    url: location.href,
    title: document.title.slice(0, 200),
    siteName: (document.querySelector('meta[property="og:site_name"]') || {}).content || "",
    colorSchemeMeta: (document.querySelector('meta[name="color-scheme"]') || {}).content || "",
    rootColorScheme: rootCS.colorScheme || "",
    htmlBackground: hex(rootCS.backgroundColor),
    bodyBackground: hex(bodyCS.backgroundColor),
    body: typo(body),
    headings: ["h1", "h2", "h3"].map((h) => { const el = firstVisible(h); const t = typo(el); if (t) t.tag = h; return t; }).filter(Boolean),
    code: typo(firstVisible("code, pre, kbd, samp")),
    texts: [], links: [], families: [], weights: [], buttons: [], inputs: [], statuses: [],
    spacings: [], radii: [], transitions: [],
    logo: null,
    favicon: "", ogImage: abs((document.querySelector('meta[property="og:image"], meta[name="og:image"]') || {}).content || ""),
    containerWidth: 0,
  };
  for (const sel of ['link[rel~="icon"]', 'link[rel="apple-touch-icon"]', 'link[rel="shortcut icon"]']) {
    const l = document.querySelector(sel);
    if (l && l.getAttribute("href")) { out.favicon = abs(l.getAttribute("href")); break; }
  }
  if (!out.favicon && location.protocol.startsWith("http")) out.favicon = location.origin + "/favicon.ico";

  // The icons the page declares, as absolute URLs.
  out.iconLinks = [];
  for (const l of document.querySelectorAll("link[rel][href]")) {
    if (out.iconLinks.length >= 20) break;
    const rel = (l.getAttribute("rel") || "").toLowerCase().split(/\s+/);
    const kind = rel.includes("mask-icon") ? "mask-icon" :
      rel.includes("apple-touch-icon") || rel.includes("apple-touch-icon-precomposed") ? "apple-touch-icon" :
      rel.includes("manifest") ? "manifest" : rel.includes("icon") ? "icon" : "";
    const href = abs(l.getAttribute("href"));
    if (!kind || !href) continue;
    out.iconLinks.push({ rel: kind, href, sizes: (l.getAttribute("sizes") || "").slice(0, 40), type: (l.getAttribute("type") || "").slice(0, 40),
      color: l.getAttribute("color") ? hex(l.getAttribute("color")) : "" });
  }
  // Words that say whom the page addresses (the first 50,000 characters).
  const words = (body.innerText || "").slice(0, 50000).toLowerCase();
  const hits = (re) => (words.match(re) || []).length;
  out.audience = {
    developers: hits(/\b(api|apis|sdks?|developers?|docs|documentation|github|npm|cli|open[- ]source|endpoints?)\b/g),
    businesses: hits(/\b(teams?|business(es)?|enterprises?|companies|b2b|invoic\w*|workflows?|sales|demo|clients)\b/g),
    shoppers: hits(/\b(cart|basket|shop|buy|checkout|shipping|add to (cart|bag)|sale|discount|in stock|free delivery)\b/g),
  };

  const texts = new Map(), links = new Map(), families = new Map(), weights = new Map(),
    spacings = new Map(), radii = new Map(), transitions = new Map();
  const all = body.getElementsByTagName("*");
  const n = Math.min(all.length, MAX_ELEMENTS);
  for (let i = 0; i < n; i++) {
    const el = all[i];
    const tag = el.tagName;
    if (tag === "SCRIPT" || tag === "STYLE" || tag === "NOSCRIPT" || tag === "TEMPLATE") continue;
    const cs = getComputedStyle(el);
    if (!visible(el, cs)) continue;
    const own = [...el.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim().length > 1);
    if (own) {
      const len = Math.min(el.textContent.length, 500);
      // Text in a link that looks like a button is the button's, not a link colour.
      const a = el.closest("a");
      const isLink = a && !/(^|[\s_-])(btn|button|cta)([\s_-]|$)/i.test(typeof a.className === "string" ? a.className : "") &&
        hex(getComputedStyle(a).backgroundColor) === "";
      if (!a || isLink) count(isLink ? links : texts, hex(cs.color), len);
      count(families, cs.fontFamily, len);
      count(weights, String(px(cs.fontWeight)), len);
    }
    for (const p of [cs.paddingTop, cs.paddingRight, cs.paddingBottom, cs.paddingLeft, cs.marginTop, cs.marginBottom, cs.rowGap, cs.columnGap]) {
      const v = Math.round(px(p));
      if (v > 0 && v <= 96) count(spacings, String(v));
    }
    if (px(cs.borderTopLeftRadius) > 0) count(radii, cs.borderTopLeftRadius);
    const td = cs.transitionDuration;
    if (td && td !== "0s") count(transitions, td.split(",")[0].trim());
    const r = el.getBoundingClientRect();
    if ((tag === "MAIN" || tag === "ARTICLE" || /container|wrapper|content/i.test(el.className || "")) && cs.maxWidth !== "none") {
      out.containerWidth = Math.max(out.containerWidth, Math.round(Math.min(r.width, px(cs.maxWidth))));
    }
    const cls = typeof el.className === "string" ? el.className : "";
    const isButton = tag === "BUTTON" || (tag === "INPUT" && /^(submit|button)$/i.test(el.type)) || el.getAttribute("role") === "button" ||
      (tag === "A" && /(^|[\s_-])(btn|button|cta)([\s_-]|$)/i.test(cls));
    if (isButton && out.buttons.length < MAX_BUTTONS && r.height < 120) {
      out.buttons.push({ background: hex(cs.backgroundColor), textColor: hex(cs.color), borderColor: px(cs.borderTopWidth) > 0 ? hex(cs.borderTopColor) : "",
        borderWidth: px(cs.borderTopWidth), borderRadius: cs.borderTopLeftRadius, padding: cs.padding, fontWeight: px(cs.fontWeight),
        fontSize: px(cs.fontSize), area: Math.round(r.width * r.height), y: Math.round(r.top + scrollY), text: text(el), classes: cls.slice(0, 120) });
    }
    if ((tag === "INPUT" && /^(text|email|search|tel|url|password|number|)$/i.test(el.type)) || tag === "TEXTAREA" || tag === "SELECT") {
      if (out.inputs.length < MAX_INPUTS) {
        out.inputs.push({ background: hex(cs.backgroundColor), textColor: hex(cs.color), borderColor: px(cs.borderTopWidth) > 0 ? hex(cs.borderTopColor) : "",
          borderWidth: px(cs.borderTopWidth), borderRadius: cs.borderTopLeftRadius, padding: cs.padding });
      }
    }
    const m = /(^|[\s_-])(success|warning|danger|error)([\s_-]|$)/i.exec(cls);
    if (m && out.statuses.length < 30) {
      out.statuses.push({ kind: m[2].toLowerCase(), background: hex(cs.backgroundColor), textColor: hex(cs.color), borderColor: px(cs.borderTopWidth) > 0 ? hex(cs.borderTopColor) : "" });
    }
  }
  out.texts = top(texts, 8); out.links = top(links, 6); out.families = top(families, 8); out.weights = top(weights, 8);
  out.spacings = top(spacings, 16); out.radii = top(radii, 8); out.transitions = top(transitions, 4);

  // The logo: an image or SVG in the header (or anything named logo),
  // near the top, preferring one inside a link to the home page.
  const cands = [...document.querySelectorAll('header img, header svg, nav img, nav svg, [class*="logo" i] img, [class*="logo" i] svg, [id*="logo" i] img, [id*="logo" i] svg, img[class*="logo" i], img[id*="logo" i], img[alt*="logo" i], img[src*="logo" i], svg[class*="logo" i], a[href="/"] img, a[href="/"] svg')];
  let best = null, bestScore = -1;
  for (const el of cands.slice(0, 40)) {
    const cs = getComputedStyle(el);
    if (!visible(el, cs)) continue;
    const r = el.getBoundingClientRect();
    if (r.top + scrollY > 400 || r.width < 12 || r.height < 8) continue;
    const named = /logo|brand/i.test((el.getAttribute("class") || "") + " " + (el.id || "") + " " + (el.getAttribute("alt") || "") + " " + (el.getAttribute("src") || "") + " " +
      ((el.closest('[class*="logo" i], [id*="logo" i], [class*="brand" i]') || {}).className || ""));
    const home = !!el.closest('a[href="/"], a[href="' + location.origin + '/"], a[href="./"]');
    const score = (named ? 4 : 0) + (home ? 2 : 0) + (el.closest("header, nav") ? 1 : 0) - r.left / 1000;
    if (score > bestScore) { best = el; bestScore = score; }
  }
  if (best) {
    if (best.tagName.toLowerCase() === "svg") {
      const markup = best.outerHTML;
      out.logo = { kind: "svg", src: markup.length <= 65536 ? "data:image/svg+xml;base64," + btoa(unescape(encodeURIComponent(markup))) : "", alt: best.getAttribute("aria-label") || "" };
    } else {
      out.logo = { kind: "img", src: abs(best.currentSrc || best.getAttribute("src")), alt: best.getAttribute("alt") || "" };
    }
  }
  // The inline icon set: small SVGs (the logo aside) drawn with strokes
  // (outline) or fills, and their colours; icon fonts by their classes.
  out.iconOutline = 0; out.iconFilled = 0;
  const iconColors = new Map();
  const paint = (v) => (!v || v === "none" || v.startsWith("url")) ? "" : hex(v);
  let looked = 0;
  for (const svg of document.querySelectorAll("svg")) {
    if (looked >= 200) break;
    if (svg === best) continue;
    const cs = getComputedStyle(svg);
    if (!visible(svg, cs)) continue;
    const r = svg.getBoundingClientRect();
    if (r.width > 48 || r.height > 48 || r.width < 8 || r.height < 8) continue;
    looked++;
    let stroked = 0, filled = 0;
    for (const s of [...svg.querySelectorAll("path, circle, rect, line, polyline, polygon, ellipse")].slice(0, 12)) {
      const ss = getComputedStyle(s);
      const st = px(ss.strokeWidth) > 0 ? paint(ss.stroke) : "";
      const f = paint(ss.fill);
      if (st) { stroked++; count(iconColors, st); } else if (f) { filled++; count(iconColors, f); }
    }
    if (stroked > filled) out.iconOutline++; else if (filled > 0) out.iconFilled++;
  }
  for (const el of [...document.querySelectorAll('i[class*="fa"], span[class*="material-"], i[class*="material-"], i[class*="bi-"]')].slice(0, 200)) {
    const cs = getComputedStyle(el);
    if (!visible(el, cs)) continue;
    const cls = typeof el.className === "string" ? el.className : "";
    if (/(^|\s)(far|fal|fa-regular|fa-light|fa-thin)(\s|$)|material-(icons|symbols)-outlined|(^|\s)bi-(?![\w-]*-fill)/.test(cls)) out.iconOutline++;
    else if (/(^|\s)(fas|fa-solid|material-icons|bi-[\w-]*-fill)(\s|$)/.test(cls)) out.iconFilled++;
    else continue;
    count(iconColors, hex(cs.color));
  }
  out.iconColors = top(iconColors, 4);
  return JSON.stringify(out);
} catch (e) { return JSON.stringify({ error: String(e && e.message || e).slice(0, 300) }); } })()
