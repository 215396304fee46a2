// Drives catalog calls of a running server with the official JavaScript
// SDK, unchanged: scrape({alexandria}) with a requestId and its replay,
// findTools, domainTools, and the errors of the catalog rules.
// Env: API_URL, API_KEY (catalog and terms), NO_TERMS_KEY (catalog, no
// terms), OFF_KEY (no catalog), PAGE_URL (a page whose host the weather
// tool lists in its domains).
import { test } from "node:test";
import assert from "node:assert/strict";
import Firecrawl from "@mendable/firecrawl-js";

const app = new Firecrawl({ apiKey: process.env.API_KEY, apiUrl: process.env.API_URL });
const noTerms = new Firecrawl({ apiKey: process.env.NO_TERMS_KEY, apiUrl: process.env.API_URL });
const off = new Firecrawl({ apiKey: process.env.OFF_KEY, apiUrl: process.env.API_URL });

const call = { provider: "weather", capability: "forecast/daily", options: { city: "Oslo" } };

test("scrape({alexandria}) runs the tool once per requestId", async () => {
  const first = await app.scrape({ alexandria: call, requestId: "sdk-weather-1" });
  assert.equal(first.requestId, "sdk-weather-1");
  assert.match(first.scrapeId, /^[0-9a-f-]{36}$/);
  assert.equal(first.creditsCost, 2);
  assert.equal(first.alexandria.length, 1);
  assert.equal(first.alexandria[0].provider, "weather");
  assert.equal(first.alexandria[0].capability, "forecast/daily");
  assert.deepEqual(first.alexandria[0].data, { city: "Oslo", forecast: "sunny" });

  const again = await app.scrape({ alexandria: [call], requestId: "sdk-weather-1" });
  assert.equal(again.scrapeId, first.scrapeId);
  assert.deepEqual(again.alexandria, first.alexandria);

  await assert.rejects(
    app.scrape({ alexandria: { ...call, options: { city: "Bergen" } }, requestId: "sdk-weather-1" }),
    (err) => err.status === 409 && err.code === "duplicate_request" && err.requestId === "sdk-weather-1",
  );
});

test("catalog rules come back as SDK errors", async () => {
  await assert.rejects(
    app.scrape({ alexandria: { provider: "nope", capability: "x" } }),
    (err) => err.status === 404 && err.code === "unknown_provider",
  );
  await assert.rejects(
    app.scrape({ alexandria: { provider: "weather", capability: "forecast/daily", options: { city: 7 } } }),
    (err) => err.status === 400 && /city/.test(err.message),
  );
  await assert.rejects(
    off.scrape({ alexandria: call }),
    (err) => err.status === 403 && err.code === "CATALOG_NOT_ENABLED",
  );
  await assert.rejects(
    noTerms.scrape({ alexandria: call }),
    (err) => err.status === 403 && err.code === "THIRD_PARTY_DATA_TERMS_REQUIRED",
  );
});

test("findTools explores the catalog", async () => {
  const providers = await noTerms.findTools();
  assert.equal(providers.level, "providers");
  assert.deepEqual(providers.items.map((p) => p.id).sort(), ["firecrawl", "weather"]);
  assert.equal(providers.next, null);

  const tools = await app.findTools({ providers: ["weather"], limit: 1 });
  assert.equal(tools.level, "tools");
  assert.equal(tools.total, 2);
  assert.equal(tools.items[0].id, "weather/forecast/daily");
  assert.deepEqual(tools.items[0].execute, { provider: "weather", capability: "forecast/daily" });
  assert.deepEqual(tools.next.options, { providers: ["weather"], level: "tools", limit: 1, offset: 1 });

  const page2 = await app.findTools(tools.next.options);
  assert.equal(page2.items[0].id, "weather/forecast/slow");
  assert.equal(page2.next, null);

  const byURL = await app.findTools({ urls: [process.env.PAGE_URL] });
  assert.deepEqual(byURL.items.map((t) => t.id), ["weather/forecast/daily"]);

  await assert.rejects(app.findTools({ level: "everything" }), (err) => err.status === 400);
});

test("domainTools lists the tools of the page's domain", async () => {
  const doc = await app.scrape(process.env.PAGE_URL, { formats: ["markdown"], domainTools: true });
  assert.ok(doc.markdown.length > 0);
  assert.equal(doc.tools.length, 1);
  assert.equal(doc.tools[0].provider, "weather");
  assert.equal(doc.tools[0].capability, "forecast/daily");
  assert.deepEqual(doc.tools[0].matchedBy, ["domain"]);
  await assert.rejects(
    off.scrape(process.env.PAGE_URL, { domainTools: true }),
    (err) => err.status === 403,
  );
});
