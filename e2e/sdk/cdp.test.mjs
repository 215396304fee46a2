// Drives one browser session of a running server with Playwright over its
// cdpUrl (connectOverCDP), then Puppeteer (connect), unchanged: the session's context is the
// browser's only one, its page is there, new pages open in it, and what
// reaches beyond it is refused.
// Env: CDP_URL (session A's cdpUrl), BAD_CDP_URL (the same with a wrong
// token), OTHER_TARGET (the page of another team's session), FORM_URL,
// NEXT_URL.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";

test("a wrong token is refused", async () => {
  await assert.rejects(chromium.connectOverCDP(process.env.BAD_CDP_URL, { timeout: 15000 }), /404/);
});

test("Playwright drives the session's context and nothing else", async () => {
  const browser = await chromium.connectOverCDP(process.env.CDP_URL, { timeout: 30000 });
  try {
    assert.equal(browser.contexts().length, 1, "one context: the session's");
    const context = browser.contexts()[0];
    assert.equal(context.pages().length, 1, "the session's page");
    const page = context.pages()[0];

    await page.goto(process.env.FORM_URL);
    await page.fill("#q", "playwright over cdp");
    await page.press("#q", "Enter");
    assert.equal(await page.textContent("#out"), "You searched for playwright over cdp");
    assert.equal(await page.evaluate(() => document.title), "Search");

    // A new page opens in the session's context.
    const second = await context.newPage();
    await second.goto(process.env.NEXT_URL);
    assert.equal(await second.title(), "The Lighthouse Keeper");
    assert.equal(context.pages().length, 2);
    await second.close();
    assert.equal(context.pages().length, 1);

    // No new contexts, no browser session, no other team's page.
    await assert.rejects(browser.newContext(), /not allowed/);
    // A browser-level CDP session is confined alike.
    const root = await browser.newBrowserCDPSession();
    const { targetInfos } = await root.send("Target.getTargets");
    assert.ok(targetInfos.length >= 1);
    assert.ok(targetInfos.every((t) => t.targetId !== process.env.OTHER_TARGET), "another session's page is listed");
    const contexts = new Set(targetInfos.map((t) => t.browserContextId));
    assert.equal(contexts.size, 1, "targets of one context");
    await assert.rejects(root.send("Target.attachToTarget", { targetId: process.env.OTHER_TARGET, flatten: true }), /not allowed/);
    await assert.rejects(root.send("Target.createBrowserContext"), /not allowed/);
    await assert.rejects(root.send("Target.disposeBrowserContext", { browserContextId: [...contexts][0] }), /not allowed/);
    await assert.rejects(root.send("Browser.close"), /not allowed/);
    await assert.rejects(root.send("SystemInfo.getInfo"), /not allowed/);
    const cdp = await context.newCDPSession(page);
    await assert.rejects(cdp.send("Target.attachToTarget", { targetId: process.env.OTHER_TARGET, flatten: true }), /not allowed/);
    await assert.rejects(cdp.send("Target.getTargetInfo", { targetId: process.env.OTHER_TARGET }), /not allowed/);
    await assert.rejects(cdp.send("Page.navigate", { url: "file:///etc/passwd" }), /not allowed/);
    const { targetInfo } = await cdp.send("Target.getTargetInfo");
    assert.equal(targetInfo.type, "page");
    assert.notEqual(targetInfo.targetId, process.env.OTHER_TARGET);
  } finally {
    await browser.close(); // disconnects; the session stays
  }
});

test("Puppeteer connects to the session and sees only its context", async () => {
  const browser = await puppeteer.connect({ browserWSEndpoint: process.env.CDP_URL, defaultViewport: null, protocolTimeout: 30000 });
  try {
    assert.equal(browser.browserContexts().length, 1, "the default context: the session's");
    const pages = await browser.pages();
    assert.equal(pages.length, 1);
    assert.equal(await pages[0].$eval("#out", (e) => e.textContent), "You searched for playwright over cdp");
    const second = await browser.newPage();
    await second.goto(process.env.NEXT_URL);
    assert.equal(await second.title(), "The Lighthouse Keeper");
    assert.equal((await browser.pages()).length, 2);
    await second.close();
    await assert.rejects(browser.createBrowserContext(), /not allowed/);
    assert.equal(browser.targets().filter((t) => t.type() === "page").length, 1, "the session's page alone");
  } finally {
    await browser.disconnect();
  }
});
