// Drives /v2/monitor of a running server with the official JavaScript SDK,
// unchanged: create, list, get, update, run, checks, check pages, delete.
// PRICE_URL changes each time BUMP_URL is fetched; STILL_URL never does.
// Env: API_URL, API_KEY, PRICE_URL, STILL_URL, BUMP_URL, HOOK_URL.
import { test } from "node:test";
import assert from "node:assert/strict";
import Firecrawl from "@mendable/firecrawl-js";

const app = new Firecrawl({ apiKey: process.env.API_KEY, apiUrl: process.env.API_URL });
const priceURL = process.env.PRICE_URL;
const stillURL = process.env.STILL_URL;

async function finished(monitorId, checkId) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const check = await app.getMonitorCheck(monitorId, checkId);
    if (check.finishedAt) return check;
    assert.ok(Date.now() < deadline, `check ${checkId} still ${check.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("monitor lifecycle with the SDK", async () => {
  const created = await app.createMonitor({
    name: "lamp price",
    schedule: { text: "daily at 9am", timezone: "Europe/Paris" },
    targets: [{ type: "scrape", urls: [priceURL, stillURL], scrapeOptions: { formats: ["markdown"] } }],
    webhook: { url: process.env.HOOK_URL, events: ["monitor.page", "check.completed"] },
    retentionDays: 7,
  });
  assert.equal(created.status, "active");
  assert.deepEqual(created.schedule, { cron: "0 9 * * *", timezone: "Europe/Paris" });
  assert.equal(created.retentionDays, 7);
  assert.ok(created.nextRunAt);
  assert.equal(created.targets[0].type, "scrape");
  assert.equal(created.estimatedCreditsPerMonth, 60);

  const listed = await app.listMonitors({ limit: 10 });
  assert.ok(listed.some((m) => m.id === created.id));
  const got = await app.getMonitor(created.id);
  assert.equal(got.name, "lamp price");

  const updated = await app.updateMonitor(created.id, { name: "lamp", goal: "price changes" });
  assert.equal(updated.name, "lamp");
  assert.equal(updated.goal, "price changes");
  assert.equal(updated.judgeEnabled, true);

  const first = await app.runMonitor(created.id);
  assert.equal(first.trigger, "manual");
  const c1 = await finished(created.id, first.id);
  assert.equal(c1.status, "completed");
  assert.deepEqual(c1.summary, { totalPages: 2, same: 0, changed: 0, new: 2, removed: 0, error: 0 });

  await fetch(process.env.BUMP_URL);
  const second = await app.runMonitor(created.id);
  const c2 = await finished(created.id, second.id);
  assert.equal(c2.status, "completed");
  assert.deepEqual(c2.summary, { totalPages: 2, same: 1, changed: 1, new: 0, removed: 0, error: 0 });
  const price = c2.pages.find((p) => p.url === priceURL);
  assert.equal(price.status, "changed");
  assert.match(price.diff.text, /-Price: 10 EUR/);
  assert.match(price.diff.text, /\+Price: 20 EUR/);
  const before = c1.pages.find((p) => p.url === priceURL);
  assert.equal(price.previousScrapeId, before.currentScrapeId);
  assert.equal(price.judgment, null, "no model is configured: no judgment");
  assert.equal(c2.pages.find((p) => p.url === stillURL).status, "same");

  // One page at a time: the SDK follows next unless told not to.
  const onePage = await app.getMonitorCheck(created.id, second.id, { limit: 1, autoPaginate: false });
  assert.equal(onePage.pages.length, 1);
  assert.ok(onePage.next);
  const all = await app.getMonitorCheck(created.id, second.id, { limit: 1 });
  assert.equal(all.pages.length, 2);
  const changedOnly = await app.getMonitorCheck(created.id, second.id, { status: "changed" });
  assert.deepEqual(changedOnly.pages.map((p) => p.url), [priceURL]);

  const checks = await app.listMonitorChecks(created.id, { limit: 10 });
  assert.deepEqual(checks.map((c) => c.id), [second.id, first.id]);
  const afterChecks = await app.getMonitor(created.id);
  assert.deepEqual(afterChecks.lastCheckSummary, c2.summary);

  const paused = await app.updateMonitor(created.id, { status: "paused" });
  assert.equal(paused.status, "paused");
  assert.equal(paused.nextRunAt, null);
  await assert.rejects(app.runMonitor(created.id), (err) => err.status === 409 || /409|paused/i.test(String(err.message)));

  assert.equal(await app.deleteMonitor(created.id), true);
  await assert.rejects(app.getMonitor(created.id), (err) => err.status === 404 || /not found/i.test(String(err.message)));
});

test("a crawl target crawls the site and compares every page", async () => {
  const created = await app.createMonitor({
    name: "site",
    schedule: { cron: "0 */6 * * *", timezone: "UTC" },
    targets: [{ type: "crawl", id: "site", url: process.env.SITE_URL, crawlOptions: { limit: 10, sitemap: "skip" } }],
  });
  assert.equal(created.targets[0].type, "crawl");
  assert.equal(created.estimatedCreditsPerMonth, 30 * 4 * 10);
  const run = await app.runMonitor(created.id);
  const check = await finished(created.id, run.id);
  assert.equal(check.status, "completed");
  assert.equal(check.summary.totalPages, 3);
  assert.equal(check.summary.new, 3);
  assert.deepEqual(check.pages.map((p) => p.url).sort(), [process.env.SITE_URL, priceURL, stillURL].sort());
  const crawlId = check.targetResults[0].crawlId;
  assert.ok(crawlId, JSON.stringify(check.targetResults));
  const crawl = await app.getCrawlStatus(crawlId);
  assert.equal(crawl.status, "completed");
  assert.equal(crawl.data.length, 3);
  await app.deleteMonitor(created.id);
});

test("invalid monitors are rejected with the field named", async () => {
  await assert.rejects(
    app.createMonitor({ name: "x", schedule: { cron: "* * * * *" }, targets: [{ type: "scrape", urls: [priceURL] }] }),
    (err) => err.status === 400 && /5 minutes/.test(String(err.message)),
  );
});
