// Drives interact code in node, python and bash programs (the server runs
// with INTERACT_RUNTIMES=node,python,bash) with the official JavaScript
// SDK, unchanged: each program runs in the bubblewrap sandbox, node with
// page connected to the session by playwright-core.
// Env: API_URL, API_KEY, FORM_URL (a search form).
import { test } from "node:test";
import assert from "node:assert/strict";
import Firecrawl from "@mendable/firecrawl-js";

const app = () => new Firecrawl({ apiKey: process.env.API_KEY, apiUrl: process.env.API_URL });
const form = process.env.FORM_URL;

test("a scrape's interact runs python and node programs in the sandbox", async () => {
  const doc = await app().scrape(form, { formats: ["markdown"], actions: [{ type: "click", selector: "#q" }, { type: "write", text: "owls" }, { type: "press", key: "Enter" }] });
  const id = doc.metadata.scrapeId;
  const py = await app().interact(id, {
    code: "import os\nprint(open('/etc/passwd').read().strip(), os.path.exists('/work'), os.environ['CDP_URL'])",
    language: "python",
  });
  assert.equal(py.success, true, JSON.stringify(py));
  assert.equal(py.stdout, "sandbox:x:1000:1000:sandbox:/tmp:/usr/sbin/nologin False ws://127.0.0.1:9222/\n");

  // node: the replayed page, driven by playwright-core.
  const js = await app().interact(id, {
    code: "console.log(await page.textContent('#out'));\nawait page.fill('#q', 'herons'); await page.press('#q', 'Enter');\nconsole.log(await page.textContent('#out'), typeof process.pid);",
    language: "node",
    timeout: 60,
  });
  assert.equal(js.success, true, JSON.stringify(js));
  assert.equal(js.stdout, "You searched for owls\nYou searched for herons number\n");
  await app().stopInteraction(id);
});

test("browserExecute runs bash (the SDK's default language) in the sandbox", async () => {
  const created = await app().browser({ ttl: 120 });
  const sh = await app().browserExecute(created.id, { code: "ls /work /root 2>&1 | wc -l; id -un; (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null && echo reached || echo unreachable" });
  assert.equal(sh.success, true, JSON.stringify(sh));
  assert.equal(sh.stdout, "2\nsandbox\nunreachable\n");

  const bomb = await app().browserExecute(created.id, { code: "while :; do sleep 100 & done", timeout: 5 });
  assert.equal(bomb.success, false);
  assert.equal(bomb.killed, true);
  assert.equal(bomb.exitCode, 137);
  assert.match(bomb.stderr, /Resource temporarily unavailable/);
  await app().deleteBrowser(created.id);
});
