// Drives POST /v2/search of a running server with the official JavaScript
// SDK, unchanged. The server's SearXNG is a scripted engine (see
// e2e/search_test.go) whose results point at PAGE_URL, MISSING_URL and an
// address nothing listens on (DOWN_URL).
// Env: API_URL, API_KEY, LIMITED_KEY (a key of a team with 100 credits).
import { test } from "node:test";
import assert from "node:assert/strict";
import Firecrawl from "@mendable/firecrawl-js";

const apiUrl = process.env.API_URL;
const apiKey = process.env.API_KEY;

test("search with scrapeOptions scrapes the results", async () => {
  const app = new Firecrawl({ apiKey: process.env.LIMITED_KEY, apiUrl });
  const res = await app.search("lighthouse keeper", {
    limit: 5,
    sources: ["web", "news", "images"],
    tbs: "qdr:w",
    country: "de",
    timeout: 30000,
    scrapeOptions: { formats: ["markdown", "links"], onlyMainContent: true },
  });
  assert.equal(res.web.length, 3, JSON.stringify(res.web));
  const [page, missing, down] = res.web;
  assert.equal(page.url, process.env.PAGE_URL);
  assert.equal(page.title, "The Lighthouse Keeper (search)");
  assert.equal(page.description, "A story about a lamp.");
  assert.equal(page.position, 1);
  assert.match(page.markdown, /# The Lighthouse Keeper/);
  assert.doesNotMatch(page.markdown, /Subscribe to our newsletter/);
  assert.ok(page.links.includes(new URL("/about", process.env.PAGE_URL).href), JSON.stringify(page.links));
  assert.equal(page.metadata.statusCode, 200);
  assert.equal(page.metadata.title, "The Lighthouse Keeper");

  assert.equal(missing.url, process.env.MISSING_URL);
  assert.equal(missing.metadata.statusCode, 404);

  assert.equal(down.url, process.env.DOWN_URL);
  assert.equal(down.markdown, undefined);
  assert.ok(down.metadata.error, "a failed scrape keeps its result with metadata.error");

  assert.equal(res.news.length, 1);
  assert.equal(res.news[0].snippet, "Keeper in the news");
  assert.match(res.news[0].markdown, /kept the lamp burning/);
  assert.equal(res.images.length, 1);
  assert.equal(res.images[0].imageUrl, new URL("/lamp.jpg", process.env.PAGE_URL).href);
  assert.equal(res.images[0].imageWidth, 800);
  assert.equal(res.images[0].markdown, undefined, "image results are not scraped");

  // 2 credits per source (3) + 1 per scraped page (article, 404 page, news).
  const usage = await app.getCreditUsage();
  assert.equal(usage.remainingCredits, 100 - 6 - 3);
});

test("search without scrapeOptions returns results only", async () => {
  const app = new Firecrawl({ apiKey, apiUrl });
  const res = await app.search("lighthouse keeper", { limit: 2, categories: ["github"] });
  assert.equal(res.web.length, 2);
  assert.equal(res.web[0].markdown, undefined);
  assert.equal(res.news, undefined);
});

test("invalid search options are rejected with the field named", async () => {
  const app = new Firecrawl({ apiKey, apiUrl });
  await assert.rejects(app.search("q", { limit: 500 }), (err) => {
    assert.equal(err.status, 400);
    assert.equal(err.message, "Invalid request body");
    assert.deepEqual(err.details[0].path, ["limit"]);
    return true;
  });
});
