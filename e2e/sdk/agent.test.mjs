// Drives agent runs of a running server with the official JavaScript SDK,
// unchanged: agent (start and wait), startAgent, getAgentStatus,
// cancelAgent, listAgents, getAgentTrace and getAgentSnapshot.
//
// Env: API_URL, API_KEY; OTHER_KEY, a key of another team; HOOK_URL, a
// webhook receiver. The server's model is scripted by the Go test: a
// prompt about the lighthouse keeper searches, scrapes and finishes; one
// with "slow" reads a page that never answers; one with "expensive" spends
// more than its maxCredits on its first turn.
import { test } from "node:test";
import assert from "node:assert/strict";
import Firecrawl from "@mendable/firecrawl-js";

const apiUrl = process.env.API_URL;
const app = (key = process.env.API_KEY) => new Firecrawl({ apiKey: key, apiUrl });
const schema = {
  type: "object",
  properties: { keeper: { type: "string" }, years: { type: "integer" } },
  required: ["keeper", "years"],
};

async function rejectsWith(promise, status, text) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.status, status, `${err.status} ${err.message}`);
    assert.ok(err.message.includes(text), err.message);
    return true;
  });
}

test("agent runs search, scrape and finish and returns schema-valid data; trace, snapshot and list", async () => {
  const fc = app();
  const res = await fc.agent({
    prompt: "How long did the lighthouse keeper keep the lamp burning?",
    schema,
    maxCredits: 500,
    webhook: { url: process.env.HOOK_URL, events: ["started", "completed"] },
    pollInterval: 1,
    timeout: 60,
  });
  assert.equal(res.status, "completed", JSON.stringify(res));
  assert.deepEqual(res.data, { keeper: "she", years: 40 });
  assert.equal(res.model, "spark-1-pro");
  assert.ok(res.creditsUsed > 0, JSON.stringify(res));
  assert.ok(Date.parse(res.expiresAt) > Date.now() + 23 * 3600e3, res.expiresAt);

  const list = await fc.listAgents();
  assert.equal(list.success, true);
  const run = list.agents.find((a) => a.options?.prompt?.startsWith("How long did the lighthouse keeper"));
  assert.ok(run, JSON.stringify(list));
  assert.equal(run.status, "completed");
  const id = run.id;

  const status = await fc.getAgentStatus(id);
  assert.equal(status.status, "completed");
  assert.deepEqual(status.data, { keeper: "she", years: 40 });

  const trace = await fc.getAgentTrace(id);
  assert.equal(trace.success, true);
  assert.equal(trace.creditsUsed, res.creditsUsed);
  const types = trace.events.map((e) => e.type);
  for (const t of ["run.started", "tool_call.started", "tool_call.finished", "artifact.updated", "run.finished"]) {
    assert.ok(types.includes(t), `${t} missing from ${types}`);
  }
  assert.equal(types.at(-1), "run.finished");
  assert.equal(trace.events.at(-1).outcome, "succeeded");
  trace.events.forEach((e, i) => assert.equal(e.producerSequence, i + 1));
  const tools = trace.events.filter((e) => e.type === "tool_call.started").map((e) => e.toolName);
  assert.deepEqual(tools, ["search", "scrape", "finish"]);

  const arts = trace.events.filter((e) => e.type === "artifact.updated");
  const snap = await fc.getAgentSnapshot(id, arts.at(-1).artifact.snapshotId);
  assert.equal(snap.success, true);
  assert.deepEqual(JSON.parse(snap.snapshot), { keeper: "she", years: 40 });
  const first = await fc.getAgentSnapshot(id, arts[0].artifact.snapshotId);
  assert.ok(first.snapshot.includes("/article"), first.snapshot);

  await rejectsWith(fc.cancelAgent(id), 409, "Agent already finished");
  const other = app(process.env.OTHER_KEY);
  await rejectsWith(other.getAgentStatus(id), 404, "Agent job not found");
  await rejectsWith(other.getAgentTrace(id), 404, "Agent job not found");
  await rejectsWith(other.getAgentSnapshot(id, arts[0].artifact.snapshotId), 404, "Agent job not found");
  await rejectsWith(other.cancelAgent(id), 404, "Agent job not found");
  const otherList = await other.listAgents();
  assert.equal(otherList.agents.length, 0);
  await rejectsWith(fc.getAgentSnapshot(id, "snap"), 400, "Invalid snapshot ID");
  await rejectsWith(fc.getAgentSnapshot(id, "0190b7a0-0000-7000-8000-000000000000"), 404, "Snapshot not found");
});

test("startAgent, cancelAgent twice", async () => {
  const fc = app();
  const started = await fc.startAgent({ prompt: "read the slow page" });
  assert.equal(started.success, true);
  assert.match(started.id, /^[0-9a-f-]{36}$/);
  assert.equal((await fc.getAgentStatus(started.id)).status, "processing");
  assert.equal(await fc.cancelAgent(started.id), true);
  const st = await fc.getAgentStatus(started.id);
  assert.equal(st.status, "failed");
  assert.equal(st.error, "Agent run was cancelled.");
  assert.equal(st.creditsUsed, 0);
  assert.equal(st.data, undefined);
  await rejectsWith(fc.cancelAgent(started.id), 409, "Agent is already cancelled");
  let trace;
  for (let i = 0; i < 100; i++) {
    trace = await fc.getAgentTrace(started.id);
    if (trace.events.some((e) => e.type === "run.finished")) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const fin = trace.events.find((e) => e.type === "run.finished");
  assert.equal(fin.outcome, "cancelled");
  assert.equal(fin.error.code, "cancelled");
});

test("a run that reaches maxCredits fails with creditsUsed 0", async () => {
  const fc = app();
  const res = await fc.agent({ prompt: "an expensive question", maxCredits: 3, pollInterval: 1, timeout: 60 });
  assert.equal(res.status, "failed", JSON.stringify(res));
  assert.match(res.error, /credit limit/);
  assert.equal(res.creditsUsed, 0);
  assert.equal(res.data, undefined);
});

test("bad requests", async () => {
  const fc = app();
  await rejectsWith(fc.startAgent({ prompt: "p", schema: { type: "nope" } }), 400, "Invalid JSON schema: ");
  await rejectsWith(fc.getAgentStatus("not-a-uuid"), 400, "Invalid job ID format. Job ID must be a valid UUID.");
  await rejectsWith(fc.getAgentStatus("0190b7a0-0000-7000-8000-000000000000"), 404, "Agent job not found");
});
