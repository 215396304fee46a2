// Drives the server's MCP endpoint (/mcp, streamable HTTP) with the
// official MCP client library, as Claude, Cursor and other agents do.
// Env: API_URL, API_KEY, LIMITED_KEY (a key of a team with 100 credits),
// PAGE_URL, TEXT_URL.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const endpoint = new URL("/mcp", process.env.API_URL);

async function connect(key) {
  const headers = key ? { Authorization: `Bearer ${key}` } : {};
  const client = new Client({ name: "firegate-e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { requestInit: { headers } }));
  return client;
}

test("without a key the server refuses the connection", async () => {
  await assert.rejects(connect(""), (err) => {
    assert.match(String(err), /401|Unauthorized/);
    return true;
  });
  await assert.rejects(connect("fc-wrong"), /401|Unauthorized/);
});

test("the tools are firecrawl-mcp's", async () => {
  const client = await connect(process.env.API_KEY);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const n of ["firecrawl_scrape", "firecrawl_map", "firecrawl_search", "firecrawl_crawl", "firecrawl_check_crawl_status",
    "firecrawl_batch_scrape", "firecrawl_check_batch_status", "firecrawl_extract", "firecrawl_agent", "firecrawl_agent_status"]) {
    assert.ok(names.includes(n), `${n} in ${names}`);
  }
  const scrape = tools.find((t) => t.name === "firecrawl_scrape");
  assert.equal(scrape.inputSchema.type, "object");
  assert.ok(scrape.inputSchema.properties.jsonOptions && scrape.inputSchema.properties.formats);
  await client.close();
});

test("a scrape is the API's, charged to the caller's team", async () => {
  const client = await connect(process.env.LIMITED_KEY);
  const res = await client.callTool({ name: "firecrawl_scrape",
    arguments: { url: process.env.PAGE_URL, formats: ["markdown", "links"], onlyMainContent: true } });
  assert.equal(res.isError, undefined, JSON.stringify(res));
  const doc = res.structuredContent;
  assert.match(doc.markdown, /# The Lighthouse Keeper/);
  assert.doesNotMatch(doc.markdown, /Subscribe to our newsletter/);
  assert.equal(doc.metadata.statusCode, 200);
  assert.deepEqual(JSON.parse(res.content[0].text), doc);

  const usage = await client.callTool({ name: "firecrawl_credit_usage", arguments: {} });
  assert.equal(usage.structuredContent.remainingCredits, 99);

  // Feedback on that scrape is kept for the operator (the Go test reads
  // it back with the CLI).
  const fb = await client.callTool({ name: "firecrawl_feedback",
    arguments: { endpoint: "scrape", jobId: doc.metadata.scrapeId, rating: "good", note: "clean markdown" } });
  assert.ok(fb.structuredContent.feedbackId, JSON.stringify(fb));
  await client.close();
});

test("search as firecrawl-mcp asks it: web results, the catalog left out with a warning", async () => {
  const client = await connect(process.env.LIMITED_KEY);
  const res = await client.callTool({ name: "firecrawl_search", arguments: { query: "lighthouse keeper", limit: 3 } });
  assert.equal(res.isError, undefined, JSON.stringify(res));
  assert.equal(res.structuredContent.web[0].url, process.env.PAGE_URL);
  assert.match(res.structuredContent.warning, /catalog/);
  const fb = await client.callTool({ name: "firecrawl_search_feedback",
    arguments: { searchId: res.structuredContent.id, rating: "good", valuableSources: [{ url: process.env.PAGE_URL }] } });
  assert.ok(fb.structuredContent.feedbackId, JSON.stringify(fb));
  await client.close();
});

test("bad arguments come back as the API's error", async () => {
  const client = await connect(process.env.API_KEY);
  const res = await client.callTool({ name: "firecrawl_scrape", arguments: { url: process.env.PAGE_URL, formats: ["markdwon"] } });
  assert.equal(res.isError, true);
  assert.equal(res.structuredContent.status, 400);
  assert.equal(res.structuredContent.code, "BAD_REQUEST");
  assert.deepEqual(res.structuredContent.details[0].path, ["formats", 0]);
  await client.close();
});

test("crawl and batch scrape wait for their job", async () => {
  const client = await connect(process.env.API_KEY);
  const crawl = await client.callTool({ name: "firecrawl_crawl", arguments: { url: process.env.PAGE_URL, limit: 1 } });
  assert.equal(crawl.isError, undefined, JSON.stringify(crawl));
  assert.equal(crawl.structuredContent.status, "completed");
  assert.equal(crawl.structuredContent.data.length, 1);
  assert.match(crawl.structuredContent.data[0].markdown, /kept the lamp burning/);
  const status = await client.callTool({ name: "firecrawl_check_crawl_status", arguments: { id: crawl.structuredContent.id } });
  assert.equal(status.structuredContent.status, "completed");

  const batch = await client.callTool({ name: "firecrawl_batch_scrape",
    arguments: { urls: [process.env.PAGE_URL, process.env.TEXT_URL], options: { formats: ["markdown"] } } });
  assert.equal(batch.structuredContent.status, "completed", JSON.stringify(batch));
  assert.equal(batch.structuredContent.data.length, 2);
  const again = await client.callTool({ name: "firecrawl_check_batch_status", arguments: { id: batch.structuredContent.id } });
  assert.equal(again.structuredContent.completed, 2);
  await client.close();
});
