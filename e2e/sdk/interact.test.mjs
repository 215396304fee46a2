// Drives the interact and browser-session routes of a running server with
// the official JavaScript SDK, unchanged: a scrape with actions replayed
// in a session, code run against its page, another team refused, the
// session stopped; standalone sessions created, run, listed, capped,
// expired by inactivity and deleted; a prompt driven by the scripted model.
// Env: API_URL, API_KEY, OTHER_KEY (another team), FORM_URL (a search form),
// MAX_SESSIONS (the server's INTERACT_MAX_SESSIONS_PER_TEAM).
import { test } from "node:test";
import assert from "node:assert/strict";
import Firecrawl from "@mendable/firecrawl-js";

const app = (key = process.env.API_KEY) => new Firecrawl({ apiKey: key, apiUrl: process.env.API_URL });
const form = process.env.FORM_URL;

// rejects asserts that fn throws the SDK's error with that status.
async function rejects(fn, status, text) {
  await assert.rejects(fn, (err) => {
    assert.equal(err.status, status, `status of ${err.message}`);
    if (text) assert.match(err.message, text);
    return true;
  });
}

test("a scrape's interact replays it, runs code, and stops", async () => {
  const doc = await app().scrape(form, {
    formats: ["markdown"],
    actions: [
      { type: "click", selector: "#q" },
      { type: "write", text: "lighthouses" },
      { type: "press", key: "Enter" },
    ],
  });
  const id = doc.metadata.scrapeId;
  assert.ok(id, "scrapeId");
  assert.match(doc.markdown, /You searched for lighthouses/);

  // The first call replays the scrape (the search was made) in a session.
  const first = await app().interact(id, {
    code: "console.log(await page.evaluate(() => document.getElementById('out').textContent));",
    language: "node",
  });
  assert.equal(first.success, true);
  assert.equal(first.stdout, "You searched for lighthouses\n");
  assert.equal(first.result, first.stdout);
  assert.equal(first.exitCode, 0);
  assert.equal(first.killed, false);
  assert.ok(first.sessionId);

  // Later calls drive the same page.
  const second = await app().interact(id, {
    code: "await page.fill('#q', 'harbours'); await page.press('#q', 'Enter');\nconsole.log(await page.evaluate(() => document.getElementById('out').textContent), await page.title());",
    timeout: 20,
  });
  assert.equal(second.stdout, "You searched for harbours Search\n");
  assert.equal(second.sessionId, first.sessionId);

  const failed = await app().interact(id, { code: "throw new Error('nope')" });
  assert.equal(failed.success, false);
  assert.equal(failed.exitCode, 1);
  assert.match(failed.stderr, /Error: nope/);

  const killed = await app().interact(id, { code: "while (true) {}", timeout: 1 });
  assert.equal(killed.success, false);
  assert.equal(killed.killed, true);

  await rejects(() => app().interact(id, { code: "print(1)", language: "python" }), 400, /python/);
  await rejects(() => app(process.env.OTHER_KEY).interact(id, { code: "console.log(1)" }), 404, /Job not found/);
  await rejects(() => app(process.env.OTHER_KEY).stopInteraction(id), 404, /Browser session not found/);

  const stopped = await app().stopInteraction(id);
  assert.equal(stopped.success, true);
  assert.equal(stopped.creditsBilled, 2);
  assert.ok(stopped.sessionDurationMs > 0);
  await rejects(() => app().interact(id, { code: "console.log(1)" }), 410, /destroyed/);
});

test("a prompt drives the scrape's session through the model", async () => {
  const doc = await app().scrape(form, { formats: ["markdown"], waitFor: 100 });
  const res = await app().interact(doc.metadata.scrapeId, { prompt: "Search for harbours and tell me what the page says", timeout: 60 });
  assert.equal(res.success, true);
  assert.equal(res.output, "The page now says: You searched for harbours");
  assert.deepEqual(res.steps.map((s) => s.action), ["type", "press", "done"]);
  const stopped = await app().stopInteraction(doc.metadata.scrapeId);
  assert.equal(stopped.creditsBilled, 7); // the prompt rate's minimum
});

test("browser sessions: create, execute, list, cap, delete", async () => {
  const created = await app().browser({ ttl: 120, activityTtl: 60 });
  assert.equal(created.success, true);
  assert.ok(created.id);
  assert.ok(Date.parse(created.expiresAt) > Date.now() + 100_000);
  assert.ok(created.liveViewUrl.startsWith(`${process.env.API_URL}/v2/interact/${created.id}/live?token=`), created.liveViewUrl);
  assert.notEqual(created.interactiveLiveViewUrl, created.liveViewUrl);
  const viewer = await fetch(created.liveViewUrl);
  assert.equal(viewer.status, 200);
  assert.match(await viewer.text(), /<img id="v"/);

  const ran = await app().browserExecute(created.id, {
    code: `const r = await page.goto(${JSON.stringify(form)}); console.log(r.status(), await page.title(), page.url() === ${JSON.stringify(form)});`,
    language: "node",
  });
  assert.equal(ran.success, true);
  assert.equal(ran.stdout, "200 Search true\n");
  // The SDK's default language is bash, which this server does not run.
  await rejects(() => app().browserExecute(created.id, { code: "ls /" }), 400, /bash/);
  await rejects(() => app(process.env.OTHER_KEY).browserExecute(created.id, { code: "1", language: "node" }), 404);
  await rejects(() => app(process.env.OTHER_KEY).deleteBrowser(created.id), 404);

  // Up to the team's cap, then 429.
  const extra = [];
  for (let i = 1; i < Number(process.env.MAX_SESSIONS); i++) extra.push((await app().browser()).id);
  await rejects(() => app().browser(), 429);

  const active = await app().listBrowsers({ status: "active" });
  assert.equal(active.success, true);
  assert.deepEqual(active.sessions.map((s) => s.id).sort(), [created.id, ...extra].sort());
  const s = active.sessions.find((s) => s.id === created.id);
  assert.equal(s.status, "active");
  assert.equal(s.streamWebView, true);
  assert.ok(Date.parse(s.lastActivity) >= Date.parse(s.createdAt));

  const deleted = await app().deleteBrowser(created.id);
  assert.equal(deleted.success, true);
  assert.equal(deleted.creditsBilled, 2);
  await rejects(() => app().browserExecute(created.id, { code: "1", language: "node" }), 410, /destroyed/);
  const destroyed = await app().listBrowsers({ status: "destroyed" });
  assert.ok(destroyed.sessions.some((s) => s.id === created.id && s.status === "destroyed"));
  for (const id of extra) assert.equal((await app().deleteBrowser(id)).success, true);
});

test("an idle session is ended by the server after its activityTtl", async () => {
  const created = await app().browser({ activityTtl: 10 });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { sessions } = await app().listBrowsers({ status: "destroyed" });
    if (sessions.some((s) => s.id === created.id)) break;
    assert.ok(Date.now() < deadline, "session still active 30 s after its 10 s activityTtl");
    await new Promise((r) => setTimeout(r, 500));
  }
  await rejects(() => app().browserExecute(created.id, { code: "1", language: "node" }), 410, /destroyed/);
});
