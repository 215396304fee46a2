// The 1.x SDK (installed as firecrawl-js-v1) speaks the v1 API: its
// scrapeUrl goes to POST /v1/scrape, which the server translates to v2.
import { test } from "node:test";
import assert from "node:assert/strict";
import FirecrawlApp from "firecrawl-js-v1";

const apiUrl = process.env.API_URL;
const apiKey = process.env.API_KEY;
const pageUrl = process.env.PAGE_URL;
const textUrl = process.env.TEXT_URL;

test("1.x SDK scrapeUrl with v1 options", async () => {
  const app = new FirecrawlApp({ apiKey, apiUrl });
  const doc = await app.scrapeUrl(pageUrl, {
    formats: ["markdown", "html", "rawHtml", "links"],
    onlyMainContent: true,
    excludeTags: [".ad"],
    headers: { "X-Test": "sdk-v1" },
    parsePDF: false,
    location: { country: "DE", languages: ["de-DE"] },
  });
  assert.equal(doc.success, true);
  assert.match(doc.markdown, /# The Lighthouse Keeper/);
  assert.doesNotMatch(doc.markdown, /Subscribe to our newsletter/);
  assert.doesNotMatch(doc.markdown, /BUY NOW/);
  assert.match(doc.html, /<h1[^>]*>The Lighthouse Keeper<\/h1>/);
  assert.match(doc.rawHtml, /content="sdk-v1"/);
  assert.ok(doc.links.includes(new URL("/about", pageUrl).href), JSON.stringify(doc.links));
  assert.equal(doc.metadata.title, "The Lighthouse Keeper");
  assert.equal(doc.metadata.statusCode, 200);
});

test("1.x SDK mapUrl returns URL strings", async () => {
  const app = new FirecrawlApp({ apiKey, apiUrl });
  const res = await app.mapUrl(pageUrl, { ignoreSitemap: true, includeSubdomains: false, limit: 50 });
  assert.equal(res.success, true, JSON.stringify(res));
  assert.ok(Array.isArray(res.links) && res.links.length > 0, JSON.stringify(res));
  for (const l of res.links) assert.equal(typeof l, "string", JSON.stringify(res.links));
  assert.ok(res.links.includes(pageUrl), JSON.stringify(res.links));
});

test("1.x SDK errors carry the server's message", async () => {
  const app = new FirecrawlApp({ apiKey, apiUrl });
  await assert.rejects(app.scrapeUrl(pageUrl, { formats: ["markdown"], location: { country: "us" } }),
    /location\.country must be two upper-case letters/);
  await assert.rejects(new FirecrawlApp({ apiKey: "fc-wrong", apiUrl }).scrapeUrl(pageUrl), /401/);
});

test("1.x SDK crawlUrl waits for the crawl and returns its documents", async () => {
  const app = new FirecrawlApp({ apiKey, apiUrl });
  const res = await app.crawlUrl(pageUrl, {
    limit: 2, ignoreSitemap: true, maxDepth: 1,
    scrapeOptions: { formats: ["markdown", "links"], onlyMainContent: true },
  }, 1);
  assert.equal(res.success, true, JSON.stringify(res));
  assert.equal(res.status, "completed");
  const article = res.data.find((d) => d.metadata?.sourceURL === pageUrl);
  assert.ok(article, JSON.stringify(res.data.map((d) => d.metadata)));
  assert.match(article.markdown, /# The Lighthouse Keeper/);
  assert.ok(Array.isArray(article.links));
  // (checkCrawlErrors of this SDK sends DELETE, not GET: not tested.)
});

test("1.x SDK batchScrapeUrls waits for the batch and returns its documents", async () => {
  const app = new FirecrawlApp({ apiKey, apiUrl });
  const res = await app.batchScrapeUrls([pageUrl, textUrl], { formats: ["markdown"], parsePDF: false }, 1);
  assert.equal(res.success, true, JSON.stringify(res));
  assert.equal(res.status, "completed");
  assert.equal(res.data.length, 2, JSON.stringify(res.data));
  const md = res.data.map((d) => d.markdown).join("\n");
  assert.match(md, /# The Lighthouse Keeper/);
  assert.match(md, /plain words/);
});

test("1.x SDK search reaches v2 search (not configured here)", async () => {
  const app = new FirecrawlApp({ apiKey, apiUrl });
  await assert.rejects(app.search("lighthouse"), /SEARXNG_ENDPOINT|not configured/i);
});

test("v1 routes not served name the v2 route; v1 usage names", async () => {
  const app = new FirecrawlApp({ apiKey, apiUrl });
  const res = await fetch(apiUrl + "/v1/llmstxt", { method: "POST", headers: { Authorization: `Bearer ${apiKey}` }, body: "{}" });
  const body = await res.json();
  assert.equal(res.status, 400);
  assert.equal(body.code, "V1_ROUTE_NOT_SERVED");
  assert.match(body.error, /POST \/v2\/llmstxt/);
  const usage = await (await fetch(apiUrl + "/v1/team/credit-usage", { headers: { Authorization: `Bearer ${apiKey}` } })).json();
  assert.equal(usage.success, true, JSON.stringify(usage));
  assert.ok("remaining_credits" in usage.data, JSON.stringify(usage));
  await assert.rejects(app.asyncExtract([pageUrl], { prompt: "the title" }), /400/); // no model here (the SDK drops the message)
  await assert.rejects(app.asyncDeepResearch("lighthouses"), /POST \/v2\/deep-research/);
});
