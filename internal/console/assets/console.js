// The console's script. Every call goes to this server's public /v2 API
// with the key signed in with (or to /admin with the operator's key); the
// keys live in this tab's sessionStorage only. Nothing from the server or
// from scraped pages is ever parsed as HTML: text goes in with textContent.
'use strict';
(() => {
  const KEY = 'firegate.key', ADMIN = 'firegate.admin', SEEN = 'firegate.seen', JOBS = 'firegate.jobs';
  // A session ends after this long without a call.
  const IDLE_MS = 60 * 60 * 1000;
  const POLL_MS = 1500;
  const $ = (id) => document.getElementById(id);
  const store = window.sessionStorage;

  const el = (tag, attrs, ...children) => {
    const n = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') n.className = v;
      else if (k === 'dataset') Object.assign(n.dataset, v);
      else if (k.startsWith('on')) n.addEventListener(k.slice(2), v);
      else n.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      n.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return n;
  };
  const clear = (n) => { while (n.firstChild) n.removeChild(n.firstChild); return n; };
  const show = (n, on) => { n.hidden = !on; };
  const fmtInt = (n) => Number(n).toLocaleString('en-US');
  const fmtTime = (s) => {
    if (!s) return '—';
    const d = new Date(s);
    return isNaN(d) ? String(s) : d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  };

  // ---- errors ---------------------------------------------------------

  class ApiError extends Error {
    constructor(kind, message, status, code, requestId) {
      super(message);
      this.kind = kind; // network | http
      this.status = status || 0;
      this.code = code || '';
      this.requestId = requestId || '';
    }
    // text is the sentence shown to the user.
    text() {
      if (this.kind === 'network') return this.message;
      let t = this.status >= 500 ? 'The server failed (' + this.status + (this.code ? ' ' + this.code : '') + '): ' + this.message
        : this.message + (this.code ? ' (' + this.status + ' ' + this.code + ')' : ' (' + this.status + ')');
      if (this.requestId && this.status >= 500) t += ' Request id ' + this.requestId + ' (in the server log).';
      return t;
    }
  }

  const banner = (text, kind) => {
    const b = $('banner');
    b.textContent = text || '';
    b.className = kind || 'error';
    show(b, !!text);
  };
  // say puts text in a status line (errors are ApiErrors or Errors).
  const say = (id, x, kind) => {
    const n = $(id);
    if (!n) return;
    n.textContent = x instanceof ApiError ? x.text() : x instanceof Error ? 'Error: ' + x.message : (x || '');
    n.className = x instanceof Error ? 'error' : (kind || '');
  };

  // ---- the session ----------------------------------------------------

  const session = {
    key: () => store.getItem(KEY) || '',
    admin: () => store.getItem(ADMIN) || '',
    touch: () => store.setItem(SEEN, String(Date.now())),
    expired: () => {
      const seen = Number(store.getItem(SEEN) || 0);
      return (session.key() || session.admin()) && seen > 0 && Date.now() - seen > IDLE_MS;
    },
    clear: () => { for (const k of [KEY, ADMIN, SEEN, JOBS]) store.removeItem(k); },
  };

  let stopped = false; // set when the session ended: late answers are ignored

  // call sends one request and returns the decoded JSON body; it throws an
  // ApiError for a network failure, a non-JSON answer or success:false.
  async function call(method, path, body, opts) {
    opts = opts || {};
    if (session.expired()) { endSession('Your session expired after an hour without use. Sign in again.'); throw new ApiError('network', 'Session expired'); }
    const key = opts.key !== undefined ? opts.key : (path.startsWith('/admin') ? session.admin() : session.key());
    const headers = { Accept: 'application/json' };
    if (key) headers.Authorization = 'Bearer ' + key;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' });
    } catch (e) {
      throw new ApiError('network', 'Cannot reach the server at ' + location.origin + ' (' + (e && e.message || e) + '). Is it running?');
    }
    const rid = res.headers.get('X-Request-Id') || '';
    const raw = await res.text().catch(() => '');
    let data = null;
    try { data = raw ? JSON.parse(raw) : null; } catch (e) { data = null; }
    if (data === null || typeof data !== 'object') {
      const what = res.ok ? 'an answer that is not JSON' : (res.status + ' ' + (res.statusText || 'error') + ' without a JSON body');
      throw new ApiError('http', 'The server sent ' + what + ' for ' + method + ' ' + path + '.', res.status, '', rid);
    }
    if (!res.ok || data.success === false) {
      let msg = data.error || data.message || ('HTTP ' + res.status);
      if (Array.isArray(data.details) && data.details.length && typeof data.details[0] === 'object' && data.details[0].message && msg.indexOf(data.details[0].message) < 0) {
        const d = data.details[0];
        msg += ': ' + (Array.isArray(d.path) && d.path.length ? d.path.join('.') + ': ' : '') + d.message;
      }
      const err = new ApiError('http', msg, res.status, data.code, rid);
      if (res.status === 401 && !opts.signingIn && !stopped) {
        if (path.startsWith('/admin')) { store.removeItem(ADMIN); applyRoles(); banner('The server no longer accepts the operator key: the Operator view is closed.'); }
        else endSession('The server no longer accepts your API key (it was revoked, or the server changed). Sign in again.');
      }
      throw err;
    }
    session.touch();
    return data;
  }

  // ---- sign in and out -----------------------------------------------

  async function signIn(ev) {
    ev.preventDefault();
    const key = $('signin-key').value.trim();
    const admin = $('signin-admin').value.trim();
    banner('');
    if (!key && !admin) { say('signin-msg', 'Enter your API key (or, for the operator, the operator key).', 'error'); return; }
    say('signin-msg', 'Checking…');
    try {
      if (key) {
        try { await call('GET', '/v2/team/credit-usage', undefined, { key, signingIn: true }); } catch (e) {
          if (e.status === 401) throw new ApiError('http', 'This API key is not accepted by the server: check it, or ask the operator for a new one.', 401, e.code);
          throw e;
        }
      }
      if (admin) {
        try { await call('GET', '/admin/teams', undefined, { key: admin, signingIn: true }); } catch (e) {
          if (e.status === 404) throw new ApiError('http', 'This server has no operator view: ADMIN_API_KEY is not set.', 404, e.code);
          if (e.status === 401) throw new ApiError('http', 'The operator key is wrong.', 401, e.code);
          throw e;
        }
      }
    } catch (e) { say('signin-msg', e); return; }
    if (key) store.setItem(KEY, key); else store.removeItem(KEY);
    if (admin) store.setItem(ADMIN, admin); else store.removeItem(ADMIN);
    session.touch();
    $('signin-key').value = ''; $('signin-admin').value = '';
    say('signin-msg', '');
    start();
  }

  function endSession(message) {
    stopped = true;
    session.clear();
    clearInterval(timer);
    show($('nav'), false);
    for (const v of document.querySelectorAll('.view')) show(v, false);
    show($('signin'), true);
    banner(message || '', message ? 'error' : '');
  }

  function applyRoles() {
    const hasKey = !!session.key(), hasAdmin = !!session.admin();
    for (const b of document.querySelectorAll('#nav .tab')) {
      const v = b.dataset.view;
      show(b, v === 'operator' ? hasAdmin : hasKey);
    }
    $('whoami').textContent = (hasKey ? 'team key ' + session.key().slice(0, 7) + '…' : '') + (hasAdmin ? (hasKey ? ' · ' : '') + 'operator' : '');
    if (!hasAdmin && current === 'operator') open(hasKey ? 'overview' : null);
  }

  // ---- views ------------------------------------------------------------

  let current = null, timer = 0;
  const loaders = {};

  function open(view) {
    current = view;
    for (const b of document.querySelectorAll('#nav .tab')) b.classList.toggle('active', b.dataset.view === view);
    for (const v of document.querySelectorAll('.view')) show(v, v.id === 'view-' + view);
    if (view && loaders[view]) loaders[view]();
  }

  function start() {
    stopped = false;
    show($('signin'), false);
    show($('nav'), true);
    applyRoles();
    open(session.key() ? 'overview' : 'operator');
    clearInterval(timer);
    timer = setInterval(() => {
      if (stopped) return;
      if (session.expired()) { endSession('Your session expired after an hour without use. Sign in again.'); return; }
      if (current === 'jobs') refreshJobs(false);
    }, POLL_MS);
  }

  // ---- overview ---------------------------------------------------------

  loaders.overview = async () => {
    loadCredits();
    loadUsage();
    loadActivity();
  };

  async function loadCredits() {
    try {
      const d = (await call('GET', '/v2/team/credit-usage')).data || {};
      if (d.unlimited || d.remainingCredits < 0) {
        $('credits-left').textContent = 'Unlimited';
        $('credits-used').textContent = '—';
        $('credits-plan').textContent = 'no credit limit';
      } else {
        $('credits-left').textContent = fmtInt(d.remainingCredits);
        $('credits-used').textContent = fmtInt(Math.max(0, d.planCredits - d.remainingCredits));
        $('credits-plan').textContent = 'of ' + fmtInt(d.planCredits) + ' granted';
      }
      banner('');
    } catch (e) { if (!stopped) { $('credits-left').textContent = '?'; banner(e.text ? e.text() : String(e)); } }
  }

  const dayKey = (d) => d.toISOString().slice(0, 10);

  async function loadUsage() {
    const chart = $('chart');
    try {
      const [c, t] = await Promise.all([
        call('GET', '/v2/team/credit-usage/historical?period=day&days=30'),
        call('GET', '/v2/team/token-usage/historical?period=day&days=30'),
      ]);
      const credits = {}, tokens = {};
      for (const p of c.periods || []) credits[String(p.startDate).slice(0, 10)] = (credits[String(p.startDate).slice(0, 10)] || 0) + (p.creditsUsed || 0);
      for (const p of t.periods || []) tokens[String(p.startDate).slice(0, 10)] = (tokens[String(p.startDate).slice(0, 10)] || 0) + (p.tokensUsed || 0);
      const days = [];
      const today = new Date(); today.setUTCHours(0, 0, 0, 0);
      for (let i = 29; i >= 0; i--) {
        const d = new Date(today.getTime() - i * 86400000);
        const k = dayKey(d);
        days.push({ day: k, credits: credits[k] || 0, tokens: tokens[k] || 0 });
      }
      const totalC = days.reduce((a, d) => a + d.credits, 0), totalT = days.reduce((a, d) => a + d.tokens, 0);
      $('usage-total').textContent = fmtInt(totalC) + ' credits';
      $('usage-tokens').textContent = fmtInt(totalT) + ' tokens';
      drawChart(clear(chart), days);
      say('chart-msg', '');
    } catch (e) { if (!stopped) { clear(chart); say('chart-msg', e); } }
  }

  function drawChart(box, days) {
    const NS = 'http://www.w3.org/2000/svg';
    const W = 720, H = 180, pad = 28, bw = (W - pad) / days.length;
    const max = Math.max(1, ...days.map((d) => d.credits));
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + (H + 20));
    svg.setAttribute('role', 'img');
    const text = (x, y, s, anchor) => {
      const t = document.createElementNS(NS, 'text');
      t.setAttribute('x', x); t.setAttribute('y', y); t.setAttribute('class', 'axis');
      if (anchor) t.setAttribute('text-anchor', anchor);
      t.textContent = s; svg.appendChild(t);
    };
    text(pad - 4, 10, fmtInt(max), 'end');
    text(pad - 4, H, '0', 'end');
    days.forEach((d, i) => {
      const h = Math.round((d.credits / max) * (H - 10));
      const r = document.createElementNS(NS, 'rect');
      r.setAttribute('x', pad + i * bw + 1); r.setAttribute('y', H - h);
      r.setAttribute('width', Math.max(1, bw - 2)); r.setAttribute('height', Math.max(h, d.credits ? 1 : 0));
      r.setAttribute('class', 'bar');
      r.dataset.day = d.day; r.dataset.credits = d.credits; r.dataset.tokens = d.tokens;
      const title = document.createElementNS(NS, 'title');
      title.textContent = d.day + ': ' + fmtInt(d.credits) + ' credits, ' + fmtInt(d.tokens) + ' tokens';
      r.appendChild(title);
      svg.appendChild(r);
      if ((i % 7 === 0 && i < days.length - 4) || i === days.length - 1) text(pad + i * bw + bw / 2, H + 14, d.day.slice(5), 'middle');
    });
    box.appendChild(svg);
  }

  async function loadActivity() {
    const body = clear($('activity').tBodies[0]);
    try {
      const a = await call('GET', '/v2/team/activity?limit=25');
      for (const x of a.data || []) {
        body.appendChild(el('tr', {}, el('td', {}, fmtTime(x.created_at)), el('td', {}, x.endpoint),
          el('td', { class: 'target' }, x.target || ''), el('td', {}, x.auditMetadata ? x.auditMetadata.username : '')));
      }
      say('activity-msg', (a.data || []).length ? '' : 'No requests in the last 24 hours.');
    } catch (e) { if (!stopped) say('activity-msg', e); }
  }

  // ---- jobs -------------------------------------------------------------

  const jobPaths = {
    crawl: (id) => '/v2/crawl/' + id,
    batch: (id) => '/v2/batch/scrape/' + id,
    extract: (id) => '/v2/extract/' + id,
    agent: (id) => '/v2/agent/' + id,
  };
  const finished = (s) => ['completed', 'failed', 'cancelled'].includes(s);
  const known = () => { try { return JSON.parse(store.getItem(JOBS) || '[]'); } catch (e) { return []; } };
  const remember = (list) => store.setItem(JOBS, JSON.stringify(list.slice(-50)));
  function follow(type, id, url) {
    const list = known();
    if (!list.some((j) => j.id === id)) { list.push({ type, id, url: url || '' }); remember(list); }
  }

  loaders.jobs = () => refreshJobs(true);

  let refreshing = false;
  let refreshSaid = false; // jobs-msg holds what a refresh said (not a start's answer)
  async function refreshJobs(discover) {
    if (refreshing) return;
    refreshing = true;
    try {
      if (discover) {
        try {
          const a = await call('GET', '/v2/crawl/active');
          for (const c of a.crawls || []) follow('crawl', c.id, c.url);
        } catch (e) { if (e.status !== 501) throw e; }
        try {
          const a = await call('GET', '/v2/agent');
          for (const r of (a.agents || []).slice(0, 20)) follow('agent', r.id, r.targetHint || (r.options && r.options.prompt) || '');
        } catch (e) { if (e.status !== 501 && e.status !== 404) throw e; }
      }
      const list = known();
      for (const j of list) {
        if (j.final) continue;
        try {
          const path = jobPaths[j.type](j.id) + (j.type === 'crawl' || j.type === 'batch' ? '?limit=1' : '');
          const s = await call('GET', path);
          j.status = s.status; j.error = s.error || '';
          if (j.type === 'crawl' || j.type === 'batch') {
            j.completed = s.completed || 0; j.total = s.total || 0;
            try {
              const e = await call('GET', jobPaths[j.type](j.id) + '/errors');
              j.errors = (e.errors || []).slice(0, 20).map((x) => (x.url ? x.url + ': ' : '') + (x.error || ''));
              j.robots = (e.robotsBlocked || []).length;
            } catch (e) { /* the status above is what matters */ }
          }
          j.final = finished(j.status);
        } catch (e) {
          if (stopped) return;
          if (e.status === 404) { j.status = 'not found'; j.error = e.message; j.final = true; } else { j.error = e.text(); }
        }
      }
      remember(list);
      drawJobs(list);
      if (!list.length) { say('jobs-msg', 'No jobs yet: start a crawl above, or follow a job by its id.'); refreshSaid = true; }
      else if (refreshSaid) { say('jobs-msg', ''); refreshSaid = false; }
    } catch (e) { if (!stopped) { say('jobs-msg', e); refreshSaid = true; } }
    finally { refreshing = false; }
  }

  function drawJobs(list) {
    const body = clear($('jobs').tBodies[0]);
    for (const j of list.slice().reverse()) {
      let progress;
      if (j.type === 'crawl' || j.type === 'batch') {
        const total = j.total || 0, done = j.completed || 0;
        const pct = total ? Math.round((done / total) * 100) : (j.status === 'completed' ? 100 : 0);
        progress = el('span', {}, el('progress', { max: 100, value: pct, 'aria-label': 'progress' }), ' ', el('span', { class: 'count' }, fmtInt(done) + ' / ' + fmtInt(total)));
      } else {
        progress = el('progress', j.final ? { max: 100, value: 100 } : {});
      }
      const errs = el('td', { class: 'errors' });
      if (j.error) errs.appendChild(el('div', { class: 'error' }, j.error));
      for (const e of j.errors || []) errs.appendChild(el('div', {}, e));
      if (j.robots) errs.appendChild(el('div', {}, j.robots + ' URL(s) blocked by robots.txt'));
      body.appendChild(el('tr', { dataset: { job: j.id } }, el('td', {}, j.type), el('td', {}, el('code', {}, j.id), j.url ? el('div', { class: 'hint' }, j.url) : null),
        el('td', { class: 'status status-' + String(j.status || 'unknown').replace(/\W+/g, '-') }, j.status || '…'), el('td', { class: 'progress' }, progress), errs));
    }
  }

  async function startCrawl(ev) {
    ev.preventDefault();
    const url = $('crawl-url').value.trim();
    const limit = parseInt($('crawl-limit').value, 10);
    say('jobs-msg', 'Starting…'); refreshSaid = false;
    try {
      const body = { url };
      if (limit > 0) body.limit = limit;
      const r = await call('POST', '/v2/crawl', body);
      follow('crawl', r.id, url);
      say('jobs-msg', 'Crawl ' + r.id + ' started.', 'ok'); refreshSaid = false;
      refreshJobs(false);
    } catch (e) { say('jobs-msg', e); }
  }

  function watchJob(ev) {
    ev.preventDefault();
    const id = $('watch-id').value.trim();
    if (!id) return;
    follow($('watch-type').value, id, '');
    $('watch-id').value = '';
    refreshJobs(false);
  }

  // ---- monitors ---------------------------------------------------------

  loaders.monitors = async () => {
    const body = clear($('monitors').tBodies[0]);
    try {
      const m = await call('GET', '/v2/monitor?limit=100');
      for (const x of m.data || []) {
        const s = x.lastCheckSummary || null;
        const result = s ? ['changed', 'new', 'removed', 'error', 'same'].filter((k) => s[k]).map((k) => s[k] + ' ' + k).join(', ') || 'no pages' : '—';
        const row = el('tr', {}, el('td', {}, x.name || x.id), el('td', {}, x.status), el('td', {}, x.schedule ? x.schedule.cron + (x.schedule.timezone ? ' ' + x.schedule.timezone : '') : ''),
          el('td', {}, fmtTime(x.lastRunAt)), el('td', {}, result), el('td', {}, fmtTime(x.nextRunAt)));
        row.addEventListener('click', () => monitorChecks(x, row));
        body.appendChild(row);
      }
      say('monitors-msg', (m.data || []).length ? 'Click a monitor for its last checks.' : 'No monitors.');
    } catch (e) { if (!stopped) say('monitors-msg', e.status === 501 ? 'Monitors are not available on this server.' : e); }
  };

  async function monitorChecks(m, row) {
    const next = row.nextSibling;
    if (next && next.classList && next.classList.contains('checks')) { next.remove(); return; }
    const cell = el('td', { colspan: 6 }, 'Loading…');
    row.after(el('tr', { class: 'checks' }, cell));
    try {
      const c = await call('GET', '/v2/monitor/' + encodeURIComponent(m.id) + '/checks?limit=5');
      clear(cell);
      if (!(c.data || []).length) cell.textContent = 'No checks yet.';
      for (const k of c.data || []) {
        const s = k.summary || {};
        cell.appendChild(el('div', {}, fmtTime(k.finishedAt || k.startedAt || k.createdAt) + ' · ' + k.status + ' · ' + (s.totalPages || 0) + ' pages, ' +
          (s.changed || 0) + ' changed, ' + (s.new || 0) + ' new, ' + (s.error || 0) + ' errors' + (k.error ? ' · ' + k.error : '')));
      }
    } catch (e) { cell.textContent = e.text ? e.text() : String(e); }
  }

  // ---- playground -------------------------------------------------------

  function pgRequest() {
    const formats = [...document.querySelectorAll('input[name=format]:checked')].map((c) => c.value);
    const body = { url: $('pg-url').value.trim() };
    const out = [];
    for (const f of formats) {
      if (f === 'json') {
        let schema;
        try { schema = JSON.parse($('pg-schema').value || '{}'); } catch (e) { throw new Error('the JSON schema is not valid JSON: ' + e.message); }
        out.push({ type: 'json', schema });
      } else out.push(f);
    }
    body.formats = out;
    body.onlyMainContent = $('pg-main').checked;
    const wait = parseInt($('pg-wait').value, 10);
    if (wait > 0) body.waitFor = wait;
    if ($('pg-proxy').value) body.proxy = $('pg-proxy').value;
    return body;
  }

  const pyValue = (v, indent) => {
    if (v === true) return 'True';
    if (v === false) return 'False';
    if (v === null) return 'None';
    if (Array.isArray(v)) return '[' + v.map((x) => pyValue(x, indent)).join(', ') + ']';
    if (typeof v === 'object') return '{' + Object.entries(v).map(([k, x]) => JSON.stringify(k) + ': ' + pyValue(x, indent)).join(', ') + '}';
    return JSON.stringify(v);
  };
  const snake = (k) => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());

  function drawCode() {
    let body;
    try { body = pgRequest(); } catch (e) { return; }
    const origin = location.origin;
    const json = JSON.stringify(body, null, 2);
    $('pg-curl').textContent = 'curl -s ' + origin + "/v2/scrape \\\n  -H 'Authorization: Bearer '\"$FIRECRAWL_API_KEY\" \\\n  -H 'Content-Type: application/json' \\\n  -d '" + json.replace(/'/g, "'\\''") + "'";
    const opts = Object.assign({}, body); delete opts.url;
    $('pg-js').textContent = "import Firecrawl from '@mendable/firecrawl-js';\n\nconst firecrawl = new Firecrawl({ apiKey: process.env.FIRECRAWL_API_KEY, apiUrl: " + JSON.stringify(origin) + " });\nconst doc = await firecrawl.scrape(" + JSON.stringify(body.url) + ', ' + JSON.stringify(opts, null, 2) + ');\nconsole.log(doc);';
    const args = Object.entries(opts).map(([k, v]) => '    ' + snake(k) + '=' + pyValue(v) + ',').join('\n');
    $('pg-py').textContent = 'import os\nfrom firecrawl import Firecrawl\n\nfirecrawl = Firecrawl(api_key=os.environ["FIRECRAWL_API_KEY"], api_url=' + JSON.stringify(origin) + ')\ndoc = firecrawl.scrape(\n    ' + JSON.stringify(body.url) + ',\n' + args + '\n)\nprint(doc)';
  }

  function pane(name) {
    for (const b of document.querySelectorAll('.subtab')) b.classList.toggle('active', b.dataset.pane === name);
    show($('pg-rendered'), name === 'rendered'); show($('pg-raw'), name === 'raw'); show($('pg-code'), name === 'code');
  }

  async function runScrape(ev) {
    ev.preventDefault();
    let body;
    try { body = pgRequest(); } catch (e) { say('pg-msg', e); return; }
    const out = clear($('pg-rendered'));
    $('pg-raw').textContent = '';
    say('pg-msg', 'Scraping ' + body.url + '…');
    $('pg-run').disabled = true;
    const t0 = performance.now();
    try {
      const r = await call('POST', '/v2/scrape', body);
      $('pg-raw').textContent = JSON.stringify(r, null, 2);
      renderDoc(out, r.data || {});
      const md = (r.data && r.data.metadata) || {};
      say('pg-msg', 'Done in ' + Math.round(performance.now() - t0) + ' ms' + (md.statusCode ? ', page status ' + md.statusCode : '') + (md.creditsUsed !== undefined ? ', ' + md.creditsUsed + ' credit(s)' : '') + '.', 'ok');
      pane('rendered');
    } catch (e) {
      say('pg-msg', e);
    } finally { $('pg-run').disabled = false; }
  }

  function renderDoc(out, d) {
    const base = (d.metadata && (d.metadata.url || d.metadata.sourceURL)) || undefined;
    if (d.metadata && d.metadata.title) out.appendChild(el('p', { class: 'doc-title' }, d.metadata.title));
    if (d.screenshot) {
      const src = String(d.screenshot);
      let ok = src.startsWith('data:image/');
      try { const u = new URL(src, location.href); ok = ok || u.protocol === 'http:' || u.protocol === 'https:'; } catch (e) { /* not a URL */ }
      out.appendChild(el('h3', {}, 'Screenshot'));
      out.appendChild(ok ? el('img', { id: 'pg-screenshot', src, alt: 'screenshot of the page' }) : el('p', { class: 'error' }, 'The screenshot is not an image URL.'));
    }
    if (d.markdown !== undefined) {
      out.appendChild(el('h3', {}, 'Markdown'));
      const md = el('article', { id: 'pg-markdown', class: 'markdown' });
      md.appendChild(window.FiregateMarkdown.render(d.markdown, base));
      out.appendChild(md);
    }
    if (d.json !== undefined) {
      out.appendChild(el('h3', {}, 'JSON'));
      out.appendChild(el('pre', { id: 'pg-json' }, JSON.stringify(d.json, null, 2)));
    }
    if (Array.isArray(d.links)) {
      out.appendChild(el('h3', {}, 'Links (' + d.links.length + ')'));
      const ul = el('ul', { id: 'pg-links' });
      for (const l of d.links.slice(0, 500)) {
        let href = null;
        try { const u = new URL(l); if (u.protocol === 'http:' || u.protocol === 'https:') href = u.href; } catch (e) { /* not a URL */ }
        ul.appendChild(el('li', {}, href ? el('a', { href, rel: 'noopener noreferrer nofollow', target: '_blank' }, l) : String(l)));
      }
      out.appendChild(ul);
    }
    if (d.html !== undefined) {
      out.appendChild(el('h3', {}, 'HTML'));
      out.appendChild(el('pre', { id: 'pg-html' }, d.html));
    }
    if (d.warning) out.appendChild(el('p', { class: 'warning' }, d.warning));
  }

  // ---- operator ---------------------------------------------------------

  let teams = [], selected = null;

  loaders.operator = async () => {
    try {
      const r = await call('GET', '/admin/teams');
      teams = r.teams || [];
      defaults = r.defaults || {};
      drawTeams();
      if (selected) { const t = teams.find((x) => x.id === selected); if (t) drawTeam(t); else show($('team-detail'), false); }
      loadFeedback();
    } catch (e) { if (!stopped) say('op-msg', e); }
  };

  let defaults = {};
  // limitText says a team's limits; a default is shown with its value.
  const limitText = (l) => {
    const val = (v, d, unl) => {
      const n = v === null || v === undefined ? d : v;
      const s = n === null || n === undefined ? '?' : n === 0 ? unl : String(n);
      return v === null || v === undefined ? s + ' (default)' : s;
    };
    const parts = ['concurrency ' + val(l.concurrency, defaults.concurrency, 'unlimited'), 'rate ×' + val(l.rateMultiplier, defaults.rateMultiplier, '∞')];
    if (l.zeroDataRetentionForced) parts.push('ZDR forced'); else if (l.zeroDataRetention) parts.push('ZDR');
    if (l.catalog) parts.push('catalog');
    if (l.thirdPartyTerms) parts.push('third-party terms');
    return parts.join(', ');
  };

  function drawTeams() {
    const body = clear($('teams').tBodies[0]);
    for (const t of teams) {
      const c = t.credits || {};
      body.appendChild(el('tr', { dataset: { team: t.name } },
        el('td', {}, t.name, el('div', { class: 'hint' }, t.id)),
        el('td', { class: 'credits' }, c.unlimited ? 'unlimited' : fmtInt(c.remaining) + ' of ' + fmtInt(c.plan)),
        el('td', {}, fmtInt(c.usedThisPeriod || 0)),
        el('td', {}, limitText(t.limits || {})),
        el('td', {}, String((t.keys || []).filter((k) => !k.revokedAt).length) + ' active'),
        el('td', {}, el('button', { type: 'button', class: 'manage', onclick: () => { selected = t.id; drawTeam(t); } }, 'Manage'))));
    }
  }

  function drawTeam(t) {
    show($('team-detail'), true);
    $('td-name').textContent = t.name;
    const l = t.limits || {};
    $('td-conc').value = l.concurrency === null || l.concurrency === undefined ? '' : l.concurrency;
    $('td-rate').value = l.rateMultiplier === null || l.rateMultiplier === undefined ? '' : l.rateMultiplier;
    $('td-zdr').checked = !!l.zeroDataRetention; $('td-zdrf').checked = !!l.zeroDataRetentionForced;
    $('td-catalog').checked = !!l.catalog; $('td-terms').checked = !!l.thirdPartyTerms;
    const body = clear($('td-keys').tBodies[0]);
    for (const k of t.keys || []) {
      body.appendChild(el('tr', { dataset: { key: k.id } }, el('td', {}, el('code', {}, k.prefix + '…')), el('td', {}, fmtTime(k.createdAt)),
        el('td', {}, k.revokedAt ? 'revoked ' + fmtTime(k.revokedAt) : 'active'),
        el('td', {}, k.revokedAt ? '' : el('button', { type: 'button', class: 'revoke', onclick: () => adminDo('DELETE', '/admin/teams/' + t.id + '/keys/' + k.id, undefined, 'Key ' + k.prefix + '… revoked.') }, 'Revoke'))));
    }
  }

  async function adminDo(method, path, body, done) {
    say('op-msg', 'Working…');
    try {
      const r = await call(method, path, body);
      say('op-msg', typeof done === 'function' ? done(r) : done, 'ok');
      await loaders.operator();
      return r;
    } catch (e) { say('op-msg', e); return null; }
  }

  async function createTeam(ev) {
    ev.preventDefault();
    const body = { name: $('team-name').value.trim() };
    const c = $('team-credits').value;
    if (c !== '') body.credits = Number(c);
    const r = await adminDo('POST', '/admin/teams', body, (r) => 'Team ' + r.team.name + ' created.');
    if (r) { $('team-name').value = ''; $('team-credits').value = ''; selected = r.team.id; loaders.operator(); }
  }

  async function newKey() {
    const t = teams.find((x) => x.id === selected);
    if (!t) return;
    const r = await adminDo('POST', '/admin/teams/' + t.id + '/keys', {}, (r) => 'Key ' + r.prefix + '… created for team ' + t.name + '.');
    if (r) { $('newkey-team').textContent = t.name; $('newkey-value').textContent = r.key; show($('newkey'), true); }
  }

  function credits(ev) {
    ev.preventDefault();
    const op = ev.submitter ? ev.submitter.dataset.op : 'add';
    const n = Number($('td-amount').value);
    adminDo('POST', '/admin/teams/' + selected + '/credits', op === 'set' ? { set: n } : { add: n }, op === 'set' ? 'Balance set.' : 'Credits added.');
  }

  function setLimits(ev) {
    ev.preventDefault();
    const num = (id) => ($(id).value === '' ? null : Number($(id).value));
    adminDo('PUT', '/admin/teams/' + selected + '/limits', {
      concurrency: num('td-conc'), rateMultiplier: num('td-rate'), zeroDataRetention: $('td-zdr').checked,
      zeroDataRetentionForced: $('td-zdrf').checked, catalog: $('td-catalog').checked, thirdPartyTerms: $('td-terms').checked,
    }, 'Limits set.');
  }

  async function loadFeedback() {
    try {
      const r = await call('GET', '/admin/feedback');
      const body = clear($('feedback').tBodies[0]);
      for (const f of r.feedback || []) {
        body.appendChild(el('tr', {}, el('td', {}, fmtTime(f.createdAt)), el('td', {}, f.team || f.teamId || ''),
          el('td', {}, (f.endpoint ? f.endpoint + ' ' : ''), el('code', {}, f.jobId || '')), el('td', {}, f.rating || ''), el('td', {}, f.comment || '')));
      }
      show($('feedback-box'), true);
    } catch (e) { show($('feedback-box'), false); }
  }

  // ---- wiring -------------------------------------------------------------

  async function copy(ev) {
    const text = $(ev.target.dataset.copy).textContent;
    try { await navigator.clipboard.writeText(text); ev.target.textContent = 'Copied'; } catch (e) { ev.target.textContent = 'Select and copy'; }
    setTimeout(() => { ev.target.textContent = 'Copy'; }, 1500);
  }

  function boot() {
    $('signin-form').addEventListener('submit', signIn);
    $('signout').addEventListener('click', () => endSession(''));
    for (const b of document.querySelectorAll('#nav .tab')) b.addEventListener('click', () => open(b.dataset.view));
    $('crawl-form').addEventListener('submit', startCrawl);
    $('watch-form').addEventListener('submit', watchJob);
    $('pg-form').addEventListener('submit', runScrape);
    $('pg-form').addEventListener('input', drawCode);
    $('pg-form').addEventListener('change', () => { show($('pg-schema-label'), document.querySelector('input[value=json]').checked); drawCode(); });
    for (const b of document.querySelectorAll('.subtab')) b.addEventListener('click', () => pane(b.dataset.pane));
    for (const b of document.querySelectorAll('.copy')) b.addEventListener('click', copy);
    $('team-form').addEventListener('submit', createTeam);
    $('td-credits').addEventListener('submit', credits);
    $('td-unlimited').addEventListener('click', () => adminDo('POST', '/admin/teams/' + selected + '/credits', { unlimited: true }, 'Team made unlimited.'));
    $('td-limits').addEventListener('submit', setLimits);
    $('td-newkey').addEventListener('click', newKey);
    $('newkey-done').addEventListener('click', () => { $('newkey-value').textContent = ''; show($('newkey'), false); });
    pane('rendered');
    drawCode();
    if (session.expired()) { endSession('Your session expired after an hour without use. Sign in again.'); return; }
    if (session.key() || session.admin()) start(); else show($('signin'), true);
  }

  window.addEventListener('error', (ev) => banner('The console hit an error: ' + (ev.message || ev.error) + '. Reload the page; the API is unaffected.'));
  window.addEventListener('unhandledrejection', (ev) => {
    const e = ev.reason;
    if (e instanceof ApiError) { if (!stopped) banner(e.text()); } else banner('The console hit an error: ' + (e && e.message || e) + '. Reload the page.');
  });
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot); else boot();
})();
