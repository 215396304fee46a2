// Drives crawl, batch scrape, map and the watcher of a running server with
// the official JavaScript SDK, unchanged. Run with --experimental-websocket
// (Node 20) so the watcher takes its WebSocket path.
// Env: API_URL, API_KEY, SITE_URL (a generated site of SITE_PAGES pages),
// SLOW_URL (the same kind of site, every page slow), HOOK_URL (a webhook
// receiver the Go test checks afterwards).
import { test } from "node:test";
import assert from "node:assert/strict";
import Firecrawl from "@mendable/firecrawl-js";

const apiUrl = process.env.API_URL;
const apiKey = process.env.API_KEY;
const site = process.env.SITE_URL;
const slow = process.env.SLOW_URL;
const app = () => new Firecrawl({ apiKey, apiUrl });

function sources(docs) {
  return docs.map((d) => d.metadata.sourceURL);
}

test("crawl waits for completion and returns every page once", async () => {
  const job = await app().crawl(site + "/", {
    limit: 25,
    sitemap: "skip",
    scrapeOptions: { formats: ["markdown", "links"] },
    webhook: { url: process.env.HOOK_URL, metadata: { run: "sdk" }, events: ["started", "page", "completed"] },
    pollInterval: 1,
  });
  assert.equal(job.status, "completed");
  assert.equal(job.total, 25);
  const urls = sources(job.data);
  assert.equal(new Set(urls).size, urls.length, "duplicate documents");
  assert.ok(job.data.length >= 20, `only ${job.data.length} documents`);
  for (const d of job.data) {
    assert.ok(d.markdown && d.markdown.length > 0, d.metadata.sourceURL);
    assert.ok(Array.isArray(d.links));
  }
  assert.ok(job.id, "crawl() returns the job id");
  const errors = await app().getCrawlErrors(job.id);
  assert.ok(Array.isArray(errors.errors) && Array.isArray(errors.robotsBlocked));
});

test("startCrawl, getCrawlStatus with pagination, errors", async () => {
  const fc = app();
  const { id, url } = await fc.startCrawl(site + "/", { limit: 40, sitemap: "skip" });
  assert.ok(url.endsWith(`/v2/crawl/${id}`));
  let status;
  for (let i = 0; i < 120; i++) {
    status = await fc.getCrawlStatus(id, { autoPaginate: false });
    if (status.status !== "scraping") break;
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.equal(status.status, "completed");
  const all = await fc.getCrawlStatus(id, { autoPaginate: true });
  assert.equal(all.data.length, new Set(sources(all.data)).size);
  assert.equal(all.data.length, all.completed - (await fc.getCrawlErrors(id)).errors.length);
  const errs = await fc.getCrawlErrors(id);
  assert.ok(errs.errors.length >= 1, "the site's 500 page is an error");
  for (const e of errs.errors) assert.ok(e.id && e.url && e.error);
});

test("cancelCrawl stops a running crawl; getActiveCrawls lists it before", async () => {
  const fc = app();
  const { id } = await fc.startCrawl(slow + "/", { sitemap: "skip" });
  const active = await fc.getActiveCrawls();
  assert.ok(active.crawls.some((c) => c.id === id), JSON.stringify(active));
  assert.equal(await fc.cancelCrawl(id), true);
  const status = await fc.getCrawlStatus(id, { autoPaginate: false });
  assert.equal(status.status, "cancelled");
  const after = await fc.getActiveCrawls();
  assert.ok(!after.crawls.some((c) => c.id === id));
});

test("batchScrape with an invalid URL, start/status/cancel/errors", async () => {
  const fc = app();
  const urls = [site + "/about", site + "/blog/post-1", site + "/docs/", "not a url"];
  const job = await fc.batchScrape(urls, { options: { formats: ["markdown"] }, ignoreInvalidURLs: true, pollInterval: 1 });
  assert.equal(job.status, "completed");
  assert.equal(job.data.length, 3);
  const started = await fc.startBatchScrape([slow + "/about", slow + "/blog/post-1", slow + "/docs/"], { ignoreInvalidURLs: true, maxConcurrency: 1 });
  assert.deepEqual(started.invalidURLs ?? [], []);
  assert.ok(await fc.cancelBatchScrape(started.id));
  const st = await fc.getBatchScrapeStatus(started.id, { autoPaginate: false });
  assert.equal(st.status, "cancelled");
  const errs = await fc.getBatchScrapeErrors(started.id);
  assert.ok(Array.isArray(errs.errors));
});

test("map lists the site's pages, honours limit and search", async () => {
  const fc = app();
  const res = await fc.map(site + "/");
  const urls = res.links.map((l) => l.url);
  assert.ok(urls.includes(site + "/about"), urls.slice(0, 10).join(" "));
  assert.ok(urls.some((u) => u.startsWith(site + "/docs/")));
  const few = await fc.map(site + "/", { limit: 5 });
  assert.equal(few.links.length, 5);
  const ranked = await fc.map(site + "/", { search: "products" });
  assert.match(ranked.links[0].url, /products/);
});

test("watcher streams every document over the WebSocket, then done", async () => {
  assert.equal(typeof globalThis.WebSocket, "function", "run node with --experimental-websocket");
  const fc = app();
  const { id } = await fc.startCrawl(site + "/", { limit: 20, sitemap: "skip", scrapeOptions: { maxAge: 0 } });
  const w = fc.watcher(id, { kind: "crawl", pollInterval: 1, timeout: 60 });
  const seen = new Set();
  const done = await new Promise((resolve, reject) => {
    w.on("document", (d) => seen.add(d.metadata.sourceURL));
    w.on("done", resolve);
    w.on("error", (e) => reject(new Error(JSON.stringify(e))));
    w.start();
  });
  assert.equal(done.status, "completed");
  const status = await fc.getCrawlStatus(id);
  assert.equal(seen.size, status.data.length);
});
