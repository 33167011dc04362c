// trendboard's dashboard kit: DOM helpers, the event-stream parser and hand-drawn SVG line charts
// (no library), kept apart from the page's logic in dashboard.js.
'use strict';

window.TrendboardKit = (() => {
  /** The key or token typed into the page, kept in this tab only (sessionStorage). */
  const TOKEN_KEY = 'trendboard-token';
  const token = () => sessionStorage.getItem(TOKEN_KEY) || '';
  const authHeaders = () => (token() ? { Authorization: `Bearer ${token()}` } : {});

  function element(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  /** Fills a select with values (strings, or { value, label }) and keeps `chosen` when it is one of them. */
  function fillSelect(select, values, chosen) {
    const options = values.map((entry) => (typeof entry === 'string' ? { value: entry, label: entry } : entry));
    select.replaceChildren(...options.map(({ value, label }) => Object.assign(element('option', label), { value })));
    if (chosen !== undefined && options.some((option) => option.value === chosen)) select.value = chosen;
  }

  /** Tries of a read answered 503 with Retry-After (a window still draining, a busy instance) before it shows an error. */
  const MAX_TRIES = 5;
  /** 503 codes that pass by themselves: the page waits Retry-After and reads again, saying nothing alarming. */
  const PASSING = new Set(['WINDOW_DRAINING', 'REDIS_BUSY']);

  /** An API path of `parts`, each encoded. */
  const path = (...parts) => parts.map(encodeURIComponent).join('/');

  /** How long to wait before reading again, for an answer that asks for it; undefined for a real error. */
  function retryDelayMs(response, body) {
    if (response.status !== 503 || !PASSING.has(body.code)) return undefined;
    return Math.max(1, Number(response.headers.get('Retry-After')) || 1) * 1000;
  }

  async function getJson(url) {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(url, { headers: authHeaders() });
      const body = await response.json().catch(() => ({}));
      if (response.ok) return body;
      const delay = retryDelayMs(response, body);
      if (delay === undefined || attempt >= MAX_TRIES)
        throw new Error(body.message || `${response.status} ${response.statusText}`);
      await sleep(delay);
    }
  }

  /**
   * A call that must not wait (a write, or an admin read): its JSON answer ({} when none), its message
   * thrown. A write says it sends JSON even with no body, as the service asks of every write.
   */
  async function send(method, url, body) {
    const writes = method !== 'GET';
    const headers = { ...authHeaders(), ...(writes ? { 'content-type': 'application/json' } : {}) };
    const response = await fetch(url, { method, headers, body: body ? JSON.stringify(body) : undefined });
    const answer = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(answer.message || `${response.status} ${response.statusText}`);
    return answer;
  }

  /** Every entry of a paged name list (boards, counters): its pages followed by nextCursor, `limit` a page. */
  async function getAllPages(url, field) {
    const all = [];
    let cursor = null;
    do {
      const page = await getJson(cursor === null ? url : `${url}&cursor=${encodeURIComponent(cursor)}`);
      all.push(...page[field]);
      cursor = page.nextCursor ?? null;
    } while (cursor !== null);
    return all;
  }

  /** `count` and its noun, singular for one: "1 sample", "5 samples". */
  function plural(count, noun, nouns = `${noun}s`) {
    return `${count} ${count === 1 ? noun : nouns}`;
  }

  function sleep(ms, signal) {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  function parseEvent(block) {
    const event = {};
    for (const line of block.split('\n')) {
      const match = /^(id|event|data): ?(.*)$/.exec(line);
      if (match) event[match[1]] = match[2];
    }
    return event;
  }

  function movementOf(row) {
    if (row.previousRank === null || row.previousRank === undefined) return { text: 'new', className: 'new' };
    if (row.previousRank > row.rank) return { text: `▲ ${row.previousRank - row.rank}`, className: 'up' };
    if (row.previousRank < row.rank) return { text: `▼ ${row.rank - row.previousRank}`, className: 'down' };
    return { text: '=', className: 'same' };
  }

  /** Figures as a person reads them: 4 significant digits for fractions, never scientific notation. */
  const FRACTION = new Intl.NumberFormat('en', { maximumSignificantDigits: 4, useGrouping: false });

  function format(value) {
    return typeof value === 'number' && !Number.isInteger(value) ? FRACTION.format(value) : String(value ?? '—');
  }

  /**
   * A line chart of points ({ x, y }); `inverted` puts the smallest y at the top (ranks). `lastPartial`:
   * the last point is a period still filling (a counter's current minute), drawn dashed and hollow.
   */
  function lineChart(points, inverted, lastPartial = false) {
    const width = 300;
    const height = 120;
    const pad = 14;
    const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    svg.setAttribute('role', 'img');
    if (points.length === 0) {
      const text = document.createElementNS(svg.namespaceURI, 'text');
      text.setAttribute('x', String(pad));
      text.setAttribute('y', String(height / 2));
      text.textContent = 'no data yet';
      svg.append(text);
      return svg;
    }
    const xs = points.map((p) => p.x);
    const ys = points.map((p) => p.y);
    const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
    const sx = (x) => pad + ((x - minX) / (maxX - minX || 1)) * (width - 2 * pad);
    const sy = (y) => {
      const share = (y - minY) / (maxY - minY || 1);
      return pad + (inverted ? share : 1 - share) * (height - 2 * pad);
    };
    const at = (p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`;
    const whole = lastPartial ? points.slice(0, -1) : points;
    const line = document.createElementNS(svg.namespaceURI, 'polyline');
    line.setAttribute('points', whole.map(at).join(' '));
    svg.append(line);
    const last = points[points.length - 1];
    if (lastPartial && points.length > 1) {
      const partial = document.createElementNS(svg.namespaceURI, 'polyline');
      partial.setAttribute('points', points.slice(-2).map(at).join(' '));
      partial.setAttribute('class', 'partial');
      svg.append(partial);
    }
    const dot = document.createElementNS(svg.namespaceURI, 'circle');
    if (lastPartial) dot.setAttribute('class', 'partial');
    dot.setAttribute('cx', sx(last.x).toFixed(1));
    dot.setAttribute('cy', sy(last.y).toFixed(1));
    dot.setAttribute('r', '3');
    const label = document.createElementNS(svg.namespaceURI, 'text');
    label.setAttribute('x', String(pad));
    label.setAttribute('y', '10');
    label.textContent = inverted ? `rank ${minY}–${maxY}, now ${last.y}` : `${minY}–${maxY}, now ${last.y}`;
    svg.append(dot, label);
    return svg;
  }

  /** An item's data (a JSON object) as term/value pairs for a <dl>: strings as they are, the rest as JSON. */
  function dataEntries(data) {
    return Object.entries(data ?? {}).flatMap(([key, value]) => [
      element('dt', key),
      element('dd', typeof value === 'string' ? value : JSON.stringify(value)),
    ]);
  }

  return {
    TOKEN_KEY,
    authHeaders,
    dataEntries,
    element,
    fillSelect,
    format,
    getAllPages,
    getJson,
    lineChart,
    movementOf,
    parseEvent,
    path,
    plural,
    retryDelayMs,
    send,
    sleep,
    token,
  };
})();
