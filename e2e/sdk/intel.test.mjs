// Drives the model-free page intelligence options of a running server (no
// OPENAI_BASE_URL) with the official JavaScript SDK, unchanged: the
// product format, redactPII, changeTracking's git-diff mode (scrapes and
// crawls), threatProtection, branding and the team activity.
// Env: API_URL, API_KEY, SHOP_URL (a Shopify-style product page),
// PII_URL (a page with contact data), CHANGE_URL (a page that changes
// after its first fetch).
import { test } from "node:test";
import assert from "node:assert/strict";
import Firecrawl from "@mendable/firecrawl-js";

const app = () => new Firecrawl({ apiKey: process.env.API_KEY, apiUrl: process.env.API_URL });

test("product format from the page's markup", async () => {
  const doc = await app().scrape(process.env.SHOP_URL, { formats: ["product"] });
  const p = doc.product;
  assert.equal(p.title, "Heavyweight Tee");
  assert.equal(p.brand, "Northwind");
  assert.equal(p.category, "Apparel > Tees");
  assert.equal(p.variants.length, 2);
  assert.deepEqual(p.variants[0].values, { color: "Black", size: "M" });
  assert.deepEqual(p.variants[0].price, { amount: 19, currency: "USD", formatted: "$19.00" });
  assert.equal(p.variants[0].sale.originalPrice.amount, 25);
  assert.deepEqual(p.variants[1].availability, { inStock: false, text: "Out of stock" });
  assert.equal(doc.metadata.creditsUsed, 1);
});

test("redactPII with the SDK's options object", async () => {
  const doc = await app().scrape(process.env.PII_URL, {
    formats: ["markdown"],
    redactPII: { entities: ["EMAIL", "PHONE", "FINANCIAL"], replaceStyle: "tag" },
  });
  assert.match(doc.markdown, /Write to <EMAIL> or call <PHONE>\./);
  assert.match(doc.markdown, /IBAN <FINANCIAL>/);
  assert.doesNotMatch(doc.markdown, /example\.com|7946|DE89/);
  assert.equal(doc.metadata.creditsUsed, 5);
});

test("changeTracking: new, then changed with a git diff", async () => {
  const opts = { formats: ["markdown", { type: "changeTracking", modes: ["git-diff"], tag: "sdk" }] };
  const first = await app().scrape(process.env.CHANGE_URL, opts);
  assert.equal(first.changeTracking.changeStatus, "new");
  assert.equal(first.changeTracking.previousScrapeAt, null);
  const second = await app().scrape(process.env.CHANGE_URL, opts);
  const ct = second.changeTracking;
  assert.equal(ct.changeStatus, "changed");
  assert.ok(Date.parse(ct.previousScrapeAt) > 0, ct.previousScrapeAt);
  assert.match(ct.diff.text, /-Coffee 5\n\+Coffee 6\n/);
  assert.equal(ct.diff.json.files[0].chunks[0].changes.some((c) => c.type === "add" && c.content === "+Coffee 6"), true);
});

// CRAWL_URL is a site whose second version (after GET CRAWL_URL + "next")
// edits /crawl/a and drops /crawl/b (404, no longer linked).
test("changeTracking in crawls: the page gone since the last crawl is removed and hidden", async () => {
  const opts = { limit: 10, scrapeOptions: { formats: ["markdown", { type: "changeTracking", modes: ["git-diff"], tag: "sdk-crawl" }] } };
  const byPath = (job) => Object.fromEntries(job.data.map((d) => [new URL(d.metadata.sourceURL).pathname, d.changeTracking]));
  const first = await app().crawl(process.env.CRAWL_URL, opts);
  assert.equal(first.status, "completed");
  const one = byPath(first);
  assert.deepEqual(Object.keys(one).sort(), ["/crawl/", "/crawl/a", "/crawl/b"]);
  for (const ct of Object.values(one)) {
    assert.equal(ct.changeStatus, "new");
    assert.equal(ct.visibility, "visible");
  }
  assert.equal((await fetch(process.env.CRAWL_URL + "next")).status, 200);
  const second = await app().crawl(process.env.CRAWL_URL, opts);
  assert.equal(second.status, "completed");
  const two = byPath(second);
  assert.deepEqual(Object.keys(two).sort(), ["/crawl/", "/crawl/a", "/crawl/b"]);
  assert.equal(two["/crawl/a"].changeStatus, "changed");
  assert.equal(two["/crawl/a"].visibility, "visible");
  assert.match(two["/crawl/a"].diff.text, /-Espresso 2\n\+Espresso 3\n/);
  assert.equal(two["/crawl/b"].changeStatus, "removed");
  assert.equal(two["/crawl/b"].visibility, "hidden");
  assert.ok(Date.parse(two["/crawl/b"].previousScrapeAt) > 0);
});

// Threat protection: the server runs with THREAT_BLOCKLIST_FILE listing
// malware-drop.example; REDIRECT_URL redirects to the same site under the
// name "localhost".
const blocked = (status, code) => (err) => {
  assert.equal(err.status, status, err.message);
  assert.equal(err.code, code, err.message);
  return true;
};

test("threatProtection: the operator's blocklist and a request's blacklist", async () => {
  await assert.rejects(app().scrape("https://login.malware-drop.example/", { formats: ["markdown"] }),
    blocked(403, "unsafe_domain_blocked"));
  await assert.rejects(app().scrape(process.env.REDIRECT_URL, {
    formats: ["markdown"], threatProtection: { mode: "normal", blacklist: ["localhost"] },
  }), blocked(403, "unsafe_domain_blocked"));
  const doc = await app().scrape(process.env.REDIRECT_URL, {
    formats: ["markdown"], threatProtection: { blockedTlds: ["zip"] },
  });
  assert.match(doc.markdown, /Heavyweight Tee/);
  assert.equal(doc.metadata.creditsUsed, 3);
  await assert.rejects(app().map(process.env.SHOP_URL, { threatProtection: { blacklist: ["127.0.0.1"] } }),
    blocked(403, "unsafe_domain_blocked"));
  await assert.rejects(app().startCrawl("https://malware-drop.example/", { limit: 2 }),
    blocked(403, "unsafe_domain_blocked"));
});
test("branding from the rendered page", { skip: process.env.HAS_BROWSER !== "1" && "no browser" }, async () => {
  const doc = await app().scrape(process.env.BRAND_URL, { formats: ["branding"], timeout: 30000 });
  const b = doc.branding;
  assert.equal(b.colorScheme, "light");
  assert.equal(b.colors.primary, "#4f46e5");
  assert.equal(b.colors.background, "#ffffff");
  assert.equal(b.colors.textPrimary, "#111827");
  assert.equal(b.typography.fontFamilies.primary, "Inter");
  assert.equal(b.typography.fontSizes.h1, "48px");
  assert.deepEqual(b.components.buttonPrimary, { background: "#4f46e5", textColor: "#ffffff", borderRadius: "8px" });
  assert.match(b.logo, /^data:image\/svg\+xml;base64,/);
  assert.equal(b.images.favicon, new URL("/favicon.svg", process.env.BRAND_URL).href);
  assert.deepEqual(b.icons, { favicon: new URL("/favicon.svg", process.env.BRAND_URL).href });
  assert.deepEqual(b.personality, { tone: "professional", energy: "medium", targetAudience: "businesses and teams" });
  for (const v of Object.values(b.colors)) if (v !== null) assert.match(v, /^#[0-9a-f]{6}$/);
  assert.equal(doc.metadata.creditsUsed, 1);
});

test("auditMetadata is recorded in GET /v2/team/activity", async () => {
  await app().scrape(process.env.SHOP_URL, { formats: ["markdown"], auditMetadata: { username: "jane@corp.example" } });
  const res = await fetch(process.env.API_URL + "/v2/team/activity?endpoint=scrape&limit=1", {
    headers: { Authorization: "Bearer " + process.env.API_KEY },
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.success, true);
  assert.equal(body.has_more, true);
  assert.equal(typeof body.cursor, "string");
  const [last] = body.data;
  assert.equal(last.endpoint, "scrape");
  assert.equal(last.api_version, "v2");
  assert.equal(last.target, process.env.SHOP_URL);
  assert.deepEqual(last.auditMetadata, { username: "jane@corp.example" });
  assert.ok(Date.now() - Date.parse(last.created_at) < 60000, last.created_at);
});
