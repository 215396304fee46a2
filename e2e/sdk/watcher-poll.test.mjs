// The watcher's polling path: where the SDK finds no WebSocket (Node 20
// without --experimental-websocket and without the undici package) it
// follows the job with GET status requests. This file takes the global
// WebSocket away and makes the SDK's import("undici") fail before loading
// the SDK, so that path is the one that runs whatever Node and packages
// are installed. node --test runs each file in its own process.
// Env: API_URL, API_KEY, SITE_URL.
import { test } from "node:test";
import assert from "node:assert/strict";
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(`export async function resolve(specifier, context, next) {
  if (specifier === "undici" || specifier.startsWith("undici/")) {
    const err = new Error("undici is hidden from this test");
    err.code = "ERR_MODULE_NOT_FOUND";
    throw err;
  }
  return next(specifier, context);
}`),
);
delete globalThis.WebSocket;
const { default: Firecrawl } = await import("@mendable/firecrawl-js");

const apiUrl = process.env.API_URL;
const apiKey = process.env.API_KEY;
const site = process.env.SITE_URL;

test("watcher without a WebSocket polls the crawl status until done", async () => {
  assert.equal(globalThis.WebSocket, undefined);
  const fc = new Firecrawl({ apiKey, apiUrl });
  const { id } = await fc.startCrawl(site + "/", { limit: 15, sitemap: "skip", scrapeOptions: { maxAge: 0 } });
  const w = fc.watcher(id, { kind: "crawl", pollInterval: 1, timeout: 60 });
  const seen = [];
  const done = await new Promise((resolve, reject) => {
    w.on("document", (d) => seen.push(d.metadata.sourceURL));
    w.on("done", resolve);
    w.on("error", (e) => reject(new Error("watcher error: " + JSON.stringify(e))));
    w.start();
  });
  assert.equal(w.ws, undefined, "the watcher polled, it opened no WebSocket");
  assert.equal(done.status, "completed");
  assert.equal(done.total, 15);
  assert.equal(done.completed, 15);
  const status = await fc.getCrawlStatus(id);
  assert.equal(seen.length, new Set(seen).size, "a document event per page, once");
  assert.deepEqual([...seen].sort(), status.data.map((d) => d.metadata.sourceURL).sort());
  assert.ok(seen.length >= 10, `${seen.length} documents`);
});
