package sandbox

// nodePrelude runs a node program with page, browser and context
// connected to the run's DevTools endpoint (CDP_URL) by playwright-core:
// the program (code.js) is the body of an async function of page,
// browser, context and require; a throw exits 1 with its stack on stderr.
// The connection is dropped, not the browser closed, at the end.
const nodePrelude = `'use strict';
const fs = require('fs');
const { chromium } = require('playwright-core');
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
(async () => {
  let browser;
  try {
    browser = await chromium.connectOverCDP(process.env.CDP_URL, { timeout: 15000 });
  } catch (e) {
    console.error('could not connect to the session over CDP: ' + (e && e.message || e));
    process.exit(70);
  }
  const context = browser.contexts()[0] || await browser.newContext();
  const page = context.pages()[0] || await context.newPage();
  const code = fs.readFileSync('/sandbox/code.js', 'utf8');
  let exit = 0;
  try {
    const fn = new AsyncFunction('page', 'browser', 'context', 'require', code);
    await fn(page, browser, context, require);
  } catch (e) {
    console.error(e && e.stack || String(e));
    exit = 1;
  }
  process.exit(process.exitCode || exit);
})();
`
