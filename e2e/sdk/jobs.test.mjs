// Drives crawl, batch scrape, map and the watcher of a running server with
// the official JavaScript SDK, unchanged. Run with --experimental-websocket
// on Node 20 so that the SDK finds a global WebSocket and the watcher takes
// its WebSocket path (watcher-poll.test.mjs covers the polling path).
//
// Env: API_URL, API_KEY; SITE_URL, a generated site; SLOW_URL, the same kind
// of site with every page slow; HOOK_URL, a webhook receiver; OUT_DIR, where
// the tests leave what they saw (JSON files) for the Go test to check
// against the site's own model of what a crawl must find.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import Firecrawl from "@mendable/firecrawl-js";

const apiUrl = process.env.API_URL;
const apiKey = process.env.API_KEY;
const site = process.env.SITE_URL;
const slow = process.env.SLOW_URL;
const app = () => new Firecrawl({ apiKey, apiUrl });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Every WebSocket the SDK opens goes through this subclass, so the tests
// can tell which transport the watcher used. The SDK looks the global up
// when a watcher starts, after this module has run.
const opened = [];
const NativeWebSocket = globalThis.WebSocket;
if (typeof NativeWebSocket === "function") {
  globalThis.WebSocket = class extends NativeWebSocket {
    constructor(url, protocols) {
      super(url, protocols);
      opened.push({ url: String(url), protocols });
    }
  };
}

function save(name, value) {
  writeFileSync(join(process.env.OUT_DIR, name + ".json"), JSON.stringify(value, null, 1));
}

const sources = (docs) => docs.map((d) => d.metadata.sourceURL);

function assertDocuments(docs, origin) {
  const urls = sources(docs);
  assert.equal(new Set(urls).size, urls.length, "duplicate documents: " + urls.join(" "));
  for (const d of docs) {
    assert.equal(typeof d.metadata?.sourceURL, "string", JSON.stringify(d).slice(0, 300));
    assert.ok(d.metadata.sourceURL.startsWith(origin + "/"), d.metadata.sourceURL);
    assert.ok(typeof d.markdown === "string" && d.markdown.length > 0, "no markdown: " + d.metadata.sourceURL);
    assert.equal(d.metadata.statusCode, 200, d.metadata.sourceURL);
  }
}

function assertErrorsShape(errs) {
  assert.ok(Array.isArray(errs.errors), JSON.stringify(errs));
  assert.ok(Array.isArray(errs.robotsBlocked), JSON.stringify(errs));
  for (const e of errs.errors) {
    for (const k of ["id", "url", "error"]) assert.equal(typeof e[k], "string", `${k} in ${JSON.stringify(e)}`);
    assert.ok(e.id && e.url && e.error, JSON.stringify(e));
  }
  for (const u of errs.robotsBlocked) assert.equal(typeof u, "string");
}

test("crawl() with a limit and formats waits for completion; a signed webhook follows it", async () => {
  const fc = app();
  const job = await fc.crawl(site + "/", {
    limit: 25,
    sitemap: "skip",
    scrapeOptions: { formats: ["markdown", "links"] },
    webhook: { url: process.env.HOOK_URL + "/crawl", metadata: { run: "sdk", n: 7 }, events: ["started", "page", "completed"] },
    pollInterval: 1,
    timeout: 60,
  });
  assert.ok(job.id, "crawl() returns the job id");
  assert.equal(job.status, "completed");
  assert.equal(job.total, 25);
  assert.equal(job.completed, 25);
  assert.equal(job.next, null);
  assertDocuments(job.data, site);
  for (const d of job.data) {
    assert.ok(Array.isArray(d.links) && d.links.length > 0, "links: " + d.metadata.sourceURL);
    assert.equal(d.html, undefined, "html was not asked for");
  }
  const errs = await fc.getCrawlErrors(job.id);
  assertErrorsShape(errs);
  // Every page the crawl took is a document or an error.
  assert.equal(job.data.length + errs.errors.length, job.completed, JSON.stringify(errs.errors));
  save("crawl-limit", { id: job.id, sources: sources(job.data), errors: errs.errors.map((e) => e.url) });
});

test("startCrawl, getCrawlStatus with automatic and manual pagination, getCrawlErrors", async () => {
  const fc = app();
  const started = await fc.startCrawl(site + "/", { scrapeOptions: { formats: ["markdown"] } });
  assert.equal(started.url, `${apiUrl}/v2/crawl/${started.id}`);
  let status;
  let nextWhileRunning = false;
  for (let i = 0; i < 200; i++) {
    status = await fc.getCrawlStatus(started.id, { autoPaginate: false });
    if (status.status !== "scraping") break;
    assert.ok(status.completed <= status.total, JSON.stringify({ ...status, data: status.data.length }));
    if (status.data.length > 0 && status.next) nextWhileRunning = true;
    await sleep(100);
  }
  assert.equal(status.status, "completed");
  assert.equal(status.completed, status.total);
  assert.ok(status.total > 60, `total ${status.total}`);
  assert.equal(status.next, null, "no next page once completed and under 100 documents");
  const full = await fc.getCrawlStatus(started.id);
  const all = sources(full.data);
  assertDocuments(full.data, site);

  // The SDK has no page size option, but it puts the id into the path as
  // given: a query there asks the server for pages of 7, whose next links
  // the SDK's own pagination then follows.
  const paged = `${started.id}?limit=7`;
  const first = await fc.getCrawlStatus(paged, { autoPaginate: false });
  assert.equal(first.data.length, 7);
  assert.ok(first.next, "a next link after the first page of 7");
  const nextURL = new URL(first.next);
  assert.equal(nextURL.origin + nextURL.pathname, `${apiUrl}/v2/crawl/${started.id}`);
  assert.equal(nextURL.searchParams.get("skip"), "7");
  assert.equal(nextURL.searchParams.get("limit"), "7");
  const auto = await fc.getCrawlStatus(paged, { autoPaginate: true });
  assert.equal(auto.next, null);
  assert.deepEqual(sources(auto.data), all, "pages of 7 followed by the SDK give every document in order");
  assert.equal((await fc.getCrawlStatus(paged, { maxResults: 10 })).data.length, 10);
  assert.equal((await fc.getCrawlStatus(paged, { maxPages: 2 })).data.length, 21);

  // Following next by hand, as a client without the SDK's pagination does.
  const manual = sources(first.data);
  let pages = 1;
  for (let next = first.next; next; pages++) {
    const res = await fetch(next, { headers: { Authorization: `Bearer ${apiKey}` } });
    assert.equal(res.status, 200, next);
    const body = await res.json();
    assert.equal(body.success, true);
    assert.equal(body.status, "completed");
    assert.ok(body.data.length > 0 && body.data.length <= 7, `${body.data.length} documents at ${next}`);
    manual.push(...sources(body.data));
    next = body.next;
  }
  assert.deepEqual(manual, all, "manual next following gives every document in order");
  assert.equal(pages, Math.ceil(all.length / 7));

  const errs = await fc.getCrawlErrors(started.id);
  assertErrorsShape(errs);
  const errURLs = errs.errors.map((e) => e.url);
  assert.ok(errURLs.includes(site + "/error"), "the 500 page is an error: " + errURLs.join(" "));
  assert.ok(errs.robotsBlocked.includes(site + "/private/"), "robots.txt blocks /private/: " + errs.robotsBlocked.join(" "));
  assert.equal(all.length + errs.errors.length, full.completed, "documents and errors make up completed");
  save("crawl-all", { id: started.id, nextWhileRunning, sources: all, errors: errURLs, robotsBlocked: errs.robotsBlocked });
});

test("getActiveCrawls lists a running crawl; cancelCrawl stops it", async () => {
  const fc = app();
  const { id } = await fc.startCrawl(slow + "/", { sitemap: "skip", scrapeOptions: { formats: ["markdown"] } });
  const active = await fc.getActiveCrawls();
  assert.equal(active.success, true);
  const mine = active.crawls.find((c) => c.id === id);
  assert.ok(mine, JSON.stringify(active));
  assert.equal(mine.url, slow + "/");
  assert.equal(typeof mine.teamId, "string");
  assert.ok(mine.teamId.length > 0);
  await sleep(700); // the home page is done, the pages it links are in flight
  assert.equal(await fc.cancelCrawl(id), true);
  const status = await fc.getCrawlStatus(id, { autoPaginate: false });
  assert.equal(status.status, "cancelled");
  // Pages in flight when the crawl was cancelled may still land (they take
  // 500 ms each, and a worker may start one for up to 500 ms after the
  // cancel); after that the count holds, as no new page starts.
  await sleep(1500);
  const settled = await fc.getCrawlStatus(id, { autoPaginate: false });
  await sleep(1000);
  const later = await fc.getCrawlStatus(id, { autoPaginate: false });
  assert.equal(later.status, "cancelled");
  assert.equal(later.completed, settled.completed, "pages completed more than a second after the cancel");
  // A full crawl of the site takes about 60 pages; the home page links 20.
  assert.ok(later.completed <= 25, `${status.completed} pages at cancel, ${later.completed} later (total ${later.total})`);
  console.log(`cancelled crawl: ${status.completed}/${status.total} pages at cancel, ${later.completed}/${later.total} later`);
  assertErrorsShape(await fc.getCrawlErrors(id));
  const after = await fc.getActiveCrawls();
  assert.ok(!after.crawls.some((c) => c.id === id), "a cancelled crawl is not active");
  save("crawl-cancel", { id, completed: later.completed });
});

test("batchScrape, startBatchScrape with invalidURLs, getBatchScrapeStatus, cancelBatchScrape, getBatchScrapeErrors", async () => {
  const fc = app();
  const valid = [site + "/about", site + "/blog/post-1", site + "/docs/"];
  const job = await fc.batchScrape([...valid, "not a url"], {
    options: { formats: ["markdown"] },
    ignoreInvalidURLs: true,
    webhook: { url: process.env.HOOK_URL + "/batch", metadata: { run: "batch" }, events: ["completed"] },
    pollInterval: 1,
    timeout: 60,
  });
  assert.equal(job.status, "completed");
  assert.equal(job.total, 3);
  assert.equal(job.completed, 3);
  assertDocuments(job.data, site);
  assert.deepEqual(sources(job.data).sort(), [...valid].sort());

  const started = await fc.startBatchScrape([site + "/orphan", "::nope::", site + "/deep/1", "not a url"], {
    options: { formats: ["markdown", "links"] },
    ignoreInvalidURLs: true,
  });
  assert.deepEqual(started.invalidURLs, ["::nope::", "not a url"]);
  assert.equal(started.url, `${apiUrl}/v2/batch/scrape/${started.id}`);
  let st;
  for (let i = 0; i < 100; i++) {
    st = await fc.getBatchScrapeStatus(started.id, { autoPaginate: false });
    if (st.status !== "scraping") break;
    await sleep(100);
  }
  assert.equal(st.status, "completed");
  assert.equal(st.total, 2);
  assert.equal(st.completed, 2);
  const full = await fc.getBatchScrapeStatus(started.id);
  assertDocuments(full.data, site);
  assert.deepEqual(sources(full.data).sort(), [site + "/deep/1", site + "/orphan"]);
  for (const d of full.data) assert.ok(Array.isArray(d.links));
  assertErrorsShape(await fc.getBatchScrapeErrors(started.id));

  // Without ignoreInvalidURLs an invalid URL fails the whole request.
  await assert.rejects(fc.startBatchScrape([site + "/about", "not a url"]), (err) => {
    assert.equal(err.status, 400, String(err));
    return true;
  });

  // A slow batch, one page at a time, cancelled early.
  const slowURLs = ["/about", "/blog/post-1", "/blog/post-2", "/docs/", "/orphan", "/deep/1"].map((p) => slow + p);
  const slowJob = await fc.startBatchScrape(slowURLs, { maxConcurrency: 1 });
  await sleep(300);
  assert.equal(await fc.cancelBatchScrape(slowJob.id), true);
  const cancelled = await fc.getBatchScrapeStatus(slowJob.id, { autoPaginate: false });
  assert.equal(cancelled.status, "cancelled");
  assert.equal(cancelled.total, 6);
  assert.ok(cancelled.completed < 6, `completed ${cancelled.completed} of 6`);
  assertErrorsShape(await fc.getBatchScrapeErrors(slowJob.id));
  save("batch", { id: job.id });
});

test("map lists the site's pages, honours limit, ranks by search", async () => {
  const fc = app();
  const res = await fc.map(site + "/");
  const urls = res.links.map((l) => l.url);
  assert.equal(new Set(urls).size, urls.length, "duplicate links");
  for (const u of [site + "/", site + "/about", site + "/orphan", site + "/docs/s1/t1/p1"]) {
    assert.ok(urls.includes(u), `${u} not in ${urls.length} links: ${urls.slice(0, 10).join(" ")}`);
  }
  for (const u of urls) assert.ok(u.startsWith(site + "/"), `foreign link ${u}`);
  for (const n of [1, 5, 12]) {
    const few = await fc.map(site + "/", { limit: n });
    assert.equal(few.links.length, n, `limit ${n}`);
  }
  const ranked = await fc.map(site + "/", { search: "products" });
  assert.ok(ranked.links.length > 0);
  assert.match(ranked.links[0].url, /\/products/);
  const firstOther = ranked.links.findIndex((l) => !/products/.test(l.url));
  const lastProduct = ranked.links.findLastIndex((l) => /products/.test(l.url));
  assert.ok(firstOther === -1 || firstOther > lastProduct, "every products link ranks above the others");
  save("map", { links: urls });
});

async function watch(fc, id, kind) {
  const w = fc.watcher(id, { kind, pollInterval: 1, timeout: 60 });
  const seen = [];
  const done = await new Promise((resolve, reject) => {
    w.on("document", (d) => seen.push(d.metadata.sourceURL));
    w.on("done", resolve);
    w.on("error", (e) => reject(new Error("watcher error: " + JSON.stringify(e))));
    w.start();
  });
  return { w, seen, done };
}

test("watcher streams a crawl's documents over a WebSocket, then done", async () => {
  assert.equal(typeof NativeWebSocket, "function", "no global WebSocket: run node 20 with --experimental-websocket");
  const fc = app();
  const { id } = await fc.startCrawl(site + "/", { limit: 20, sitemap: "skip", scrapeOptions: { maxAge: 0 } });
  const { w, seen, done } = await watch(fc, id, "crawl");
  assert.equal(done.status, "completed");
  assert.ok(w.ws instanceof NativeWebSocket, "the watcher used a WebSocket");
  const mine = opened.filter((o) => o.url.endsWith(`/v2/crawl/${id}`));
  assert.equal(mine.length, 1, JSON.stringify(opened));
  assert.equal(mine[0].url, `${apiUrl.replace(/^http/, "ws")}/v2/crawl/${id}`);
  assert.equal(mine[0].protocols, apiKey, "the key goes as the subprotocol");
  const status = await fc.getCrawlStatus(id);
  assert.equal(status.status, "completed");
  assert.equal(seen.length, new Set(seen).size, "a document event per page, once");
  assert.deepEqual([...seen].sort(), sources(status.data).sort());
  assert.ok(seen.length >= 15, `${seen.length} documents`);
});

test("watcher streams a batch scrape over a WebSocket", async () => {
  const fc = app();
  const urls = ["/about", "/blog/post-3", "/docs/s1/t2/", "/deep/2"].map((p) => site + p);
  const { id } = await fc.startBatchScrape(urls, { options: { formats: ["markdown"], maxAge: 0 } });
  const { w, seen, done } = await watch(fc, id, "batch");
  assert.equal(done.status, "completed");
  assert.ok(w.ws instanceof NativeWebSocket, "the watcher used a WebSocket");
  assert.ok(opened.some((o) => o.url.endsWith(`/v2/batch/scrape/${id}`)), JSON.stringify(opened));
  assert.deepEqual([...seen].sort(), [...urls].sort());
});
