// Drives a running server with the official JavaScript SDK, unchanged.
// Env: API_URL (server), API_KEY (a valid key), PAGE_URL (an article page),
// TEXT_URL (a text/plain page), MISSING_URL (a page answering 404).
import { test } from "node:test";
import assert from "node:assert/strict";
import Firecrawl from "@mendable/firecrawl-js";

const apiUrl = process.env.API_URL;
const apiKey = process.env.API_KEY;
const pageUrl = process.env.PAGE_URL;

test("scrape with several formats and options", async () => {
  const app = new Firecrawl({ apiKey, apiUrl });
  const doc = await app.scrape(pageUrl, {
    formats: ["markdown", "html", "rawHtml", "links", { type: "attributes", selectors: [{ selector: "a.tag", attribute: "href" }] }],
    onlyMainContent: true,
    excludeTags: [".ad"],
    timeout: 15000,
    headers: { "X-Test": "sdk" },
    location: { country: "DE", languages: ["de-DE", "en"] },
  });
  assert.match(doc.markdown, /# The Lighthouse Keeper/);
  assert.match(doc.markdown, /kept the lamp burning/);
  assert.doesNotMatch(doc.markdown, /Subscribe to our newsletter/);
  assert.doesNotMatch(doc.markdown, /BUY NOW/);
  assert.match(doc.html, /<h1[^>]*>The Lighthouse Keeper<\/h1>/);
  assert.doesNotMatch(doc.html, /<script/);
  assert.match(doc.rawHtml, /<script>var tracker = 1;<\/script>/);
  assert.ok(doc.links.includes(new URL("/about", pageUrl).href), JSON.stringify(doc.links));
  assert.deepEqual(doc.attributes, [{ selector: "a.tag", attribute: "href", values: ["/tags/sea", "/tags/night"] }]);
  assert.equal(doc.metadata.title, "The Lighthouse Keeper");
  assert.equal(doc.metadata.description, "A story about a lamp.");
  assert.equal(doc.metadata.language, "en");
  assert.equal(doc.metadata.sourceURL, pageUrl);
  assert.equal(doc.metadata.statusCode, 200);
  assert.equal(doc.metadata["x-test"], "sdk", "custom header reached the page");
  assert.equal(doc.metadata["x-accept-language"], "de-DE,en;q=0.9", "location.languages became Accept-Language");
  assert.ok(doc.metadata.scrapeId, "scrapeId set");
});

test("scrape a text page and a missing page", async () => {
  const app = new Firecrawl({ apiKey, apiUrl });
  const text = await app.scrape(process.env.TEXT_URL, { formats: ["markdown"] });
  assert.equal(text.markdown, "plain words\n");
  const missing = await app.scrape(process.env.MISSING_URL, { formats: ["markdown"] });
  assert.equal(missing.metadata.statusCode, 404);
  assert.ok(missing.metadata.error, "metadata.error set for a 404 target");
});

test("bad key is rejected with the contract's error", async () => {
  const app = new Firecrawl({ apiKey: "fc-not-a-real-key", apiUrl });
  await assert.rejects(app.scrape(pageUrl), (err) => {
    assert.equal(err.status, 401);
    assert.equal(err.message, "Unauthorized: Invalid token");
    return true;
  });
});

test("invalid options are rejected with the field named", async () => {
  const app = new Firecrawl({ apiKey, apiUrl });
  await assert.rejects(app.scrape(pageUrl, { timeout: 500 }), (err) => {
    assert.equal(err.status, 400);
    assert.equal(err.code, "BAD_REQUEST");
    assert.ok(JSON.stringify(err.details).includes("timeout"), JSON.stringify(err.details));
    return true;
  });
});

test("credits, concurrency and queue status of a team with a balance", async () => {
  const app = new Firecrawl({ apiKey: process.env.LIMITED_KEY, apiUrl });
  const doc = await app.scrape(pageUrl, { formats: ["markdown"], maxAge: 0 });
  assert.equal(doc.metadata.creditsUsed, 1);
  const usage = await app.getCreditUsage();
  assert.equal(usage.remainingCredits, 99);
  assert.equal(usage.planCredits, 100);
  assert.ok(usage.billingPeriodStart && usage.billingPeriodEnd);
  const hist = await app.getCreditUsageHistorical();
  assert.equal(hist.periods.length, 1);
  assert.equal(hist.periods[0].creditsUsed, 1);
  const conc = await app.getConcurrency();
  assert.deepEqual(conc, { concurrency: 0, maxConcurrency: 64 });
  const queue = await app.getQueueStatus();
  assert.equal(queue.jobsInQueue, 0);
  assert.equal(queue.maxConcurrency, 64);
  assert.ok(queue.mostRecentSuccess);
});

test("actions and a screenshot in the browser", { skip: process.env.HAS_BROWSER !== "1" && "no browser" }, async () => {
  const app = new Firecrawl({ apiKey, apiUrl });
  const doc = await app.scrape(process.env.FORM_URL, {
    formats: ["markdown", { type: "screenshot", fullPage: true }],
    actions: [
      { type: "click", selector: "#q" },
      { type: "write", text: "lanterns" },
      { type: "press", key: "Enter" },
      { type: "wait", milliseconds: 100 },
      { type: "executeJavascript", script: "return document.title" },
      { type: "screenshot" },
    ],
    timeout: 30000,
  });
  assert.match(doc.markdown, /You searched for lanterns/);
  assert.deepEqual(doc.actions.javascriptReturns, [{ type: "string", value: "Search" }]);
  assert.equal(doc.actions.screenshots.length, 1);
  for (const url of [doc.screenshot, doc.actions.screenshots[0]]) {
    const res = await fetch(url);
    assert.equal(res.status, 200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    assert.deepEqual([...bytes.slice(0, 4)], [0x89, 0x50, 0x4e, 0x47], "a PNG");
  }
});

test("parse an uploaded file", async () => {
  const app = new Firecrawl({ apiKey, apiUrl });
  const doc = await app.parse(
    { filename: "tides.csv", data: "place,high\nDover,06:12\nSt Ives,07:01\n", contentType: "text/csv" },
    { formats: ["markdown"] },
  );
  assert.match(doc.markdown, /\| Dover \| 06:12 \|/);
  await assert.rejects(app.parse({ filename: "deck.pptx", data: Buffer.from("PK\x03\x04junk") }), (err) => {
    assert.equal(err.status, 400);
    assert.equal(err.code, "UNSUPPORTED_FILE_TYPE");
    return true;
  });
});

test("a browser profile keeps local storage between scrapes", { skip: process.env.HAS_BROWSER !== "1" && "no browser" }, async () => {
  const app = new Firecrawl({ apiKey, apiUrl });
  const visit = () => app.scrape(process.env.FORM_URL, {
    formats: ["markdown"],
    profile: { name: "e2e-visits" },
    actions: [{ type: "executeJavascript", script: 'localStorage.setItem("n", String(Number(localStorage.getItem("n") || 0) + 1)); return localStorage.getItem("n")' }],
    timeout: 30000,
  });
  assert.equal((await visit()).actions.javascriptReturns[0].value, "1");
  assert.equal((await visit()).actions.javascriptReturns[0].value, "2");
});
