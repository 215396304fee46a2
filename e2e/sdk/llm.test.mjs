// Drives the language model formats and extract of a running server with
// the official JavaScript SDK, unchanged. The server's OPENAI_BASE_URL is
// a scripted OpenAI-compatible endpoint (see e2e/llm_test.go) that answers
// from the schema and instructions it receives.
// Env: API_URL, API_KEY, PAGE_URL (the lighthouse article).
import { test } from "node:test";
import assert from "node:assert/strict";
import Firecrawl from "@mendable/firecrawl-js";
import { z } from "zod";

const app = () => new Firecrawl({ apiKey: process.env.API_KEY, apiUrl: process.env.API_URL });
const page = process.env.PAGE_URL;

test("scrape with a json format from a zod schema", async () => {
  const schema = z.object({ keeper: z.string(), years: z.number() });
  const doc = await app().scrape(page, {
    formats: [{ type: "json", schema, prompt: "Who kept the lamp, and for how long?" }],
  });
  assert.deepEqual(doc.json, { keeper: "she", years: 40 });
  assert.equal(doc.markdown, undefined);
  assert.equal(doc.metadata.creditsUsed, 5);
  // What the server sent the model is checked by the Go test.
});

test("scrape with a json format from a plain JSON schema, with markdown", async () => {
  const doc = await app().scrape(page, {
    formats: ["markdown", { type: "json", schema: { type: "object", properties: { tags: { type: "array", items: { type: "string" } } }, required: ["tags"] } }],
  });
  assert.deepEqual(doc.json, { tags: ["sea", "night"] });
  assert.match(doc.markdown, /# The Lighthouse Keeper/);
});

test("scrape with summary, question and highlights", async () => {
  const doc = await app().scrape(page, {
    formats: ["summary", { type: "question", question: "How long did she keep the lamp?" }, { type: "highlights", query: "ships" }],
  });
  assert.equal(doc.summary, "A keeper tends a lighthouse lamp for forty years.");
  assert.equal(doc.answer, "Forty years.");
  assert.equal(doc.highlights, "Ships passed in the night and never knew her name, but they knew her light.");
  assert.equal(doc.metadata.creditsUsed, 9);
});

test("deterministicJson: a recipe written once, then reused without the model", async () => {
  const schema = { type: "object", properties: { title: { type: "string" }, tags: { type: "array", items: { type: "string" } } }, required: ["title"] };
  const first = await app().scrape(page + "?dj=1", { formats: [{ type: "deterministicJson", schema }] });
  assert.deepEqual(first.json, { title: "The Lighthouse Keeper", tags: ["sea", "night"] });
  assert.equal(first.metadata.creditsUsed, 10);
  const again = await app().scrape(page + "?dj=2", { formats: [{ type: "deterministicJson", schema }] });
  assert.deepEqual(again.json, { title: "The Lighthouse Keeper", tags: ["sea", "night"] });
  assert.equal(again.metadata.creditsUsed, 3);
});

test("extract over two URLs merges the pages' results", async () => {
  const res = await app().extract({
    urls: [page, page + "?copy=2"],
    prompt: "The tags of the story",
    schema: z.object({ tags: z.array(z.string()) }),
    showSources: true,
    pollInterval: 1,
    timeout: 60,
  });
  assert.equal(res.success, true, JSON.stringify(res));
  assert.equal(res.status, "completed");
  assert.deepEqual(res.data, { tags: ["sea", "night"] });
  assert.equal(res.sources.tags.length, 2);
  // Billed by tokens: 150 a page (the scripted endpoint's usage) / 15.
  assert.equal(res.tokensUsed, 300);
  assert.equal(res.creditsUsed, 20);
});

test("extract with a prompt and no schema", async () => {
  const res = await app().extract({ urls: [page], prompt: "Which sea words does the story use?", pollInterval: 1, timeout: 60 });
  assert.equal(res.status, "completed", JSON.stringify(res));
  assert.deepEqual(res.data, { words: ["sea", "storm"] });
});

test("an invalid schema is a clear error", async () => {
  await assert.rejects(
    app().scrape(page, { formats: [{ type: "json", schema: { type: "objekt" } }] }),
    (err) => {
      assert.match(String(err.message), /Invalid JSON schema/);
      return true;
    },
  );
});

test("token usage: an extract's tokens are what the team's token balance loses", async () => {
  const fc = new Firecrawl({ apiKey: process.env.LIMITED_KEY, apiUrl: process.env.API_URL });
  const before = await fc.getTokenUsage();
  assert.equal(before.remainingTokens, 1000 * 15, JSON.stringify(before));
  assert.equal(before.planTokens, 1000 * 15);
  const res = await fc.extract({
    urls: [page + "?copy=3"],
    schema: { type: "object", properties: { tags: { type: "array", items: { type: "string" } } } },
    pollInterval: 1,
    timeout: 60,
  });
  assert.equal(res.status, "completed", JSON.stringify(res));
  assert.equal(res.tokensUsed, 150);
  assert.equal(res.creditsUsed, 10);
  const after = await fc.getTokenUsage();
  assert.equal(after.remainingTokens, (1000 - 10) * 15, JSON.stringify(after));
  // The usage history is written by the ledger within a second or so.
  let periods = [];
  for (let i = 0; i < 50; i++) {
    periods = (await fc.getTokenUsageHistorical()).periods;
    if (periods.some((p) => p.tokensUsed === 150)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(periods.some((p) => p.tokensUsed === 150), JSON.stringify(periods));
});

test("changeTracking json mode: new, then same, at the json price", async () => {
  const opts = {
    formats: ["markdown", {
      type: "changeTracking", modes: ["json"], tag: "sdk-json",
      schema: { type: "object", properties: { keeper: { type: "string" }, years: { type: "number" } } },
    }],
  };
  const first = await app().scrape(page, opts);
  assert.equal(first.changeTracking.changeStatus, "new");
  assert.equal(first.changeTracking.json, null);
  assert.equal(first.metadata.creditsUsed, 5);
  const second = await app().scrape(page, opts);
  assert.equal(second.changeTracking.changeStatus, "same");
  assert.ok(Date.parse(second.changeTracking.previousScrapeAt) > 0);
});

test("redactPII: true has the model find people and places", async () => {
  const doc = await app().scrape(page, { formats: ["markdown"], redactPII: true });
  assert.match(doc.markdown, /storm that came off <LOCATION>\./);
  assert.equal(doc.warning, undefined);
  assert.equal(doc.metadata.creditsUsed, 5);
});
