// Markdown to DOM for the console's playground. Scraped text is never
// parsed as HTML: every piece becomes a text node or an element built here,
// links keep only http(s) and mailto targets, and images are shown as links
// (the page's Content-Security-Policy would not load them anyway).
'use strict';
window.FiregateMarkdown = (() => {
  const safeHref = (href, base) => {
    try {
      const u = new URL(href, base || undefined);
      if (u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'mailto:') return u.href;
    } catch (e) { /* not a URL */ }
    return null;
  };

  const el = (tag, text) => {
    const n = document.createElement(tag);
    if (text !== undefined) n.textContent = text;
    return n;
  };

  // Inline patterns, tried at each position; the earliest match wins.
  const inlineRules = [
    { re: /\\([\\`*_{}\[\]()#+\-.!|<>~])/y, make: (m) => document.createTextNode(m[1]) },
    { re: /(`+)([\s\S]*?[^`])\1(?!`)/y, make: (m) => el('code', m[2].trim()) },
    { re: /!\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/y, make: (m, base) => {
      const href = safeHref(m[2], base);
      const text = 'image' + (m[1] ? ': ' + m[1] : '');
      if (!href) return el('span', '[' + text + ']');
      const a = el('a', '[' + text + ']');
      a.href = href; a.rel = 'noopener noreferrer nofollow'; a.target = '_blank';
      return a;
    } },
    { re: /\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/y, make: (m, base, inline) => {
      const href = safeHref(m[2], base);
      const a = el(href ? 'a' : 'span');
      inline(a, m[1], base);
      if (href) { a.href = href; a.rel = 'noopener noreferrer nofollow'; a.target = '_blank'; }
      return a;
    } },
    { re: /<(https?:\/\/[^\s>]+)>/y, make: (m, base) => {
      const href = safeHref(m[1], base);
      const a = el(href ? 'a' : 'span', m[1]);
      if (href) { a.href = href; a.rel = 'noopener noreferrer nofollow'; a.target = '_blank'; }
      return a;
    } },
    { re: /(\*\*|__)(?=\S)([\s\S]*?\S)\1/y, make: (m, base, inline) => { const b = el('strong'); inline(b, m[2], base); return b; } },
    { re: /(\*|_)(?=\S)([\s\S]*?\S)\1/y, make: (m, base, inline) => { const i = el('em'); inline(i, m[2], base); return i; } },
    { re: /~~(?=\S)([\s\S]*?\S)~~/y, make: (m, base, inline) => { const s = el('del'); inline(s, m[1], base); return s; } },
  ];
  const special = /[\\`!\[<*_~]/g;

  function inline(parent, text, base) {
    let i = 0, plain = '';
    const flush = () => { if (plain) { parent.appendChild(document.createTextNode(plain)); plain = ''; } };
    while (i < text.length) {
      special.lastIndex = i;
      const s = special.exec(text);
      if (!s) { plain += text.slice(i); break; }
      plain += text.slice(i, s.index);
      i = s.index;
      let done = false;
      // An underscore inside a word (snake_case) is not emphasis.
      const intraword = text[i] === '_' && i > 0 && /[A-Za-z0-9]/.test(text[i - 1]);
      for (const r of intraword ? [] : inlineRules) {
        r.re.lastIndex = i;
        const m = r.re.exec(text);
        if (m) {
          flush();
          parent.appendChild(r.make(m, base, inline));
          i += m[0].length;
          done = true;
          break;
        }
      }
      if (!done) { plain += text[i]; i++; }
    }
    flush();
  }

  const splitRow = (line) => {
    let s = line.trim();
    if (s.startsWith('|')) s = s.slice(1);
    if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
    return s.split(/(?<!\\)\|/).map((c) => c.trim());
  };

  // render returns a fragment holding text as markdown; base resolves
  // relative links (the scraped page's URL).
  function render(text, base) {
    const out = document.createDocumentFragment();
    const lines = String(text || '').replace(/\r\n?/g, '\n').split('\n');
    let i = 0;
    const isBlank = (l) => /^\s*$/.test(l);
    const startsBlock = (l) => /^(\s{0,3}(#{1,6}\s|>|```|~~~|[-*+]\s|\d{1,9}[.)]\s|(\*\s*){3,}$|(-\s*){3,}$|(_\s*){3,}$))/.test(l) || /^\s*\|/.test(l);
    while (i < lines.length) {
      const line = lines[i];
      if (isBlank(line)) { i++; continue; }
      let m;
      if ((m = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)/.exec(line))) {
        const fence = m[1];
        const code = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence)) code.push(lines[i++]);
        i++;
        const pre = el('pre'); const c = el('code', code.join('\n'));
        if (m[2]) c.dataset.lang = m[2];
        pre.appendChild(c); out.appendChild(pre);
        continue;
      }
      if ((m = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
        const h = el('h' + m[1].length); inline(h, m[2], base); out.appendChild(h); i++;
        continue;
      }
      if (/^\s{0,3}((\*\s*){3,}|(-\s*){3,}|(_\s*){3,})$/.test(line)) { out.appendChild(el('hr')); i++; continue; }
      if (/^\s{0,3}>/.test(line)) {
        const quoted = [];
        while (i < lines.length && /^\s{0,3}>/.test(lines[i])) quoted.push(lines[i++].replace(/^\s{0,3}>\s?/, ''));
        const q = el('blockquote'); q.appendChild(render(quoted.join('\n'), base)); out.appendChild(q);
        continue;
      }
      if ((m = /^\s*([-*+]|\d{1,9}[.)])\s+/.exec(line))) {
        const ordered = /\d/.test(m[1]);
        const list = el(ordered ? 'ol' : 'ul');
        const itemRe = ordered ? /^\s*\d{1,9}[.)]\s+(.*)$/ : /^\s*[-*+]\s+(.*)$/;
        let item = null;
        while (i < lines.length && !isBlank(lines[i])) {
          const im = itemRe.exec(lines[i]);
          if (im) {
            item = el('li'); inline(item, im[1], base); list.appendChild(item);
          } else if (item && /^\s+\S/.test(lines[i]) && !startsBlock(lines[i].trim())) {
            item.appendChild(document.createTextNode(' ')); inline(item, lines[i].trim(), base);
          } else if (item && /^\s+([-*+]|\d{1,9}[.)])\s+/.test(lines[i])) {
            const sub = /^\s+(?:[-*+]|\d{1,9}[.)])\s+(.*)$/.exec(lines[i]);
            const li = el('li'); li.className = 'sub'; inline(li, sub[1], base); list.appendChild(li);
          } else break;
          i++;
        }
        out.appendChild(list);
        continue;
      }
      if (/^\s*\|/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{2,}/.test(lines[i + 1])) {
        const table = el('table'); const thead = el('thead'); const tr = el('tr');
        for (const c of splitRow(line)) { const th = el('th'); inline(th, c, base); tr.appendChild(th); }
        thead.appendChild(tr); table.appendChild(thead);
        const tbody = el('tbody');
        i += 2;
        while (i < lines.length && /^\s*\|/.test(lines[i])) {
          const row = el('tr');
          for (const c of splitRow(lines[i++])) { const td = el('td'); inline(td, c, base); row.appendChild(td); }
          tbody.appendChild(row);
        }
        table.appendChild(tbody); out.appendChild(table);
        continue;
      }
      const para = [];
      while (i < lines.length && !isBlank(lines[i]) && !(para.length && startsBlock(lines[i]))) para.push(lines[i++].trim());
      const p = el('p'); inline(p, para.join(' '), base); out.appendChild(p);
    }
    return out;
  }

  return { render };
})();
