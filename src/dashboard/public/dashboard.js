// trendboard's live dashboard: plain browser JavaScript served by the app (no build step, no CDN).
// The live top comes from GET /boards/:board/stream, read with fetch so it can send the API key
// (EventSource cannot send headers). Charts are hand-drawn SVG.
'use strict';

(() => {
  /** What the page waits before reconnecting a dropped stream, and how often panels refresh. */
  const RETRY_MS = 1000;
  const REFRESH_MS = 5000;
  /** Scores of an item kept from the stream when its window keeps no snapshots. */
  const LIVE_POINTS = 60;
  const TOKEN_KEY = 'trendboard-token';
  /** The counter precision shown first (when the counter keeps it): minutes read well on a small chart. */
  const DEFAULT_PRECISION = '60';

  const $ = (id) => document.getElementById(id);
  const query = new URLSearchParams(location.search);
  const state = { boards: [], board: null, window: null, limit: 10, stream: null, selected: null, live: new Map() };

  const token = () => sessionStorage.getItem(TOKEN_KEY) || '';
  const authHeaders = () => (token() ? { Authorization: `Bearer ${token()}` } : {});
  const path = (...parts) => parts.map(encodeURIComponent).join('/');

  async function getJson(url) {
    const response = await fetch(url, { headers: authHeaders() });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.message || `${response.status} ${response.statusText}`);
    return body;
  }

  function setStatus(text, live = false) {
    $('status').textContent = text;
    $('status').classList.toggle('live', live);
  }

  function element(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function fillSelect(select, values, chosen) {
    select.replaceChildren(...values.map((value) => element('option', value)));
    if (chosen !== undefined && values.includes(chosen)) select.value = chosen;
  }

  // ---- boards and the live top ----

  async function loadBoards() {
    const { boards } = await getJson('/boards?limit=1000');
    state.boards = boards;
    $('empty').hidden = boards.length > 0;
    if (boards.length === 0) return;
    fillSelect(
      $('board'),
      boards.map((b) => b.name),
      state.board ?? query.get('board') ?? undefined,
    );
    selectBoard($('board').value, query.get('window') ?? undefined);
  }

  /** The windows and views of a board: each is read the same way. */
  function readablesOf(board) {
    return [...board.windows, ...(board.views ?? [])];
  }

  function selectBoard(name, windowName) {
    state.board = name;
    const board = state.boards.find((b) => b.name === name);
    fillSelect(
      $('window'),
      readablesOf(board).map((w) => w.name),
      windowName,
    );
    selectWindow($('window').value);
  }

  function selectWindow(name) {
    state.window = name;
    state.selected = null;
    state.live.clear();
    $('item-name').textContent = '';
    $('sparkline').replaceChildren();
    $('item-note').textContent = 'Click a row to see its rank over recent slots.';
    startStream();
  }

  function startStream() {
    state.stream?.abort();
    const controller = new AbortController();
    state.stream = controller;
    void runStream(state.board, state.window, state.limit, controller.signal);
  }

  function sleep(ms, signal) {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Reads the event stream until aborted; reconnects with Last-Event-ID (the server answers a fresh snapshot). */
  async function runStream(board, windowName, limit, signal) {
    let lastId = '';
    while (!signal.aborted) {
      try {
        const response = await fetch(`/boards/${path(board)}/stream?window=${path(windowName)}&limit=${limit}`, {
          headers: { ...authHeaders(), Accept: 'text/event-stream', ...(lastId ? { 'Last-Event-ID': lastId } : {}) },
          signal,
        });
        if (!response.ok) {
          const body = await response.json().catch(() => ({}));
          setStatus(`stream refused: ${body.message || response.status}`);
        } else {
          setStatus('live', true);
          const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += value;
            let cut;
            while ((cut = buffer.indexOf('\n\n')) >= 0) {
              const event = parseEvent(buffer.slice(0, cut));
              buffer = buffer.slice(cut + 2);
              if (event.id) lastId = event.id;
              if (event.event === 'snapshot' || event.event === 'top') renderTop(JSON.parse(event.data));
            }
          }
        }
      } catch (error) {
        if (signal.aborted) return;
        setStatus(`stream lost: ${error.message}`);
      }
      if (!signal.aborted) setStatus('reconnecting…');
      await sleep(RETRY_MS, signal);
    }
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

  function renderTop(listing) {
    const from = new Date(listing.from * 1000).toLocaleTimeString();
    const to = new Date(listing.to * 1000).toLocaleTimeString();
    $('span').textContent = `${listing.board} / ${listing.window}: ${from} – ${to} · version ${listing.version}`;
    const rows = listing.items.map((row) => {
      const move = movementOf(row);
      const tr = element('tr');
      tr.dataset.item = row.item;
      tr.append(
        element('td', row.rank, 'rank'),
        element('td', move.text, `move ${move.className}`),
        element('td', row.item, 'item'),
        element('td', row.score, 'num score'),
      );
      if (row.item === state.selected) tr.classList.add('selected');
      tr.addEventListener('click', () => selectItem(row.item));
      remember(row);
      return tr;
    });
    $('top').tBodies[0].replaceChildren(...rows);
    $('empty').hidden = rows.length > 0;
    if (rows.length === 0) $('empty').textContent = 'No items in this window yet.';
    if (state.selected && !keepsSnapshots()) drawSparkline(state.live.get(state.selected) ?? [], 'score');
  }

  function remember(row) {
    const points = state.live.get(row.item) ?? [];
    points.push({ at: Date.now() / 1000, rank: row.rank, score: row.score });
    state.live.set(row.item, points.slice(-LIVE_POINTS));
  }

  function keepsSnapshots() {
    const board = state.boards.find((b) => b.name === state.board);
    return Boolean(readablesOf(board ?? { windows: [] }).find((w) => w.name === state.window)?.snapshots);
  }

  async function selectItem(item) {
    state.selected = item;
    for (const tr of $('top').tBodies[0].rows) tr.classList.toggle('selected', tr.dataset.item === item);
    $('item-name').textContent = item;
    if (!keepsSnapshots()) {
      $('item-note').textContent = 'Score as the stream showed it (this window keeps no snapshots).';
      drawSparkline(state.live.get(item) ?? [], 'score');
      return;
    }
    const history = await getJson(
      `/boards/${path(state.board, 'items', item, 'history')}?window=${path(state.window)}`,
    );
    const points = history.points.filter((point) => point.rank !== null);
    $('item-note').textContent =
      `Rank at each of the last ${history.points.length} slot boundaries (${points.length} in the top), then now.`;
    const now = state.live.get(item)?.at(-1);
    drawSparkline(now ? [...points, now] : points, 'rank');
  }

  /** A sparkline of `field` over points ({ at, rank, score }): rank 1 at the top, scores growing upwards. */
  function drawSparkline(points, field) {
    $('sparkline').replaceChildren(
      lineChart(
        points.map((point) => ({ x: point.at, y: point[field] })),
        field === 'rank',
      ),
    );
  }

  function lineChart(points, inverted) {
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
    const line = document.createElementNS(svg.namespaceURI, 'polyline');
    line.setAttribute('points', points.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' '));
    svg.append(line);
    const last = points[points.length - 1];
    const dot = document.createElementNS(svg.namespaceURI, 'circle');
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

  // ---- counters ----

  async function loadCounters() {
    const { counters } = await getJson('/counters?limit=1000');
    if (counters.length === 0) {
      $('counter-note').textContent = 'No counters yet (POST /counters/:name/increment).';
      return;
    }
    state.counters = counters;
    fillSelect(
      $('counter'),
      counters.map((c) => c.name),
      $('counter').value || undefined,
    );
    selectCounter($('counter').value);
  }

  function selectCounter(name) {
    const counter = state.counters.find((c) => c.name === name);
    fillSelect($('precision'), counter.precisions.map(String), $('precision').value || DEFAULT_PRECISION);
    void drawCounter();
  }

  async function drawCounter() {
    const name = $('counter').value;
    if (!name) return;
    const precision = $('precision').value;
    const { samples } = await getJson(`/counters/${path(name)}?precision=${precision}`);
    $('counter-chart').replaceChildren(
      lineChart(
        samples.map((s) => ({ x: s.t, y: s.count })),
        false,
      ),
    );
    $('counter-note').textContent = `${samples.length} samples of ${precision} s`;
  }

  // ---- stats ----

  async function showStats(event) {
    event?.preventDefault();
    const context = $('stats-context').value.trim();
    const type = $('stats-type').value.trim();
    const figures = $('stats-figures');
    try {
      const stats = await getJson(`/stats/${path(context, type)}`);
      const rows = [
        ['count', stats.count],
        ['average', stats.average],
        ['p50', stats.p50],
        ['p90', stats.p90],
        ['p99', stats.p99],
        ['max', stats.max],
      ];
      figures.replaceChildren(
        ...rows.flatMap(([name, value]) => [element('dt', name), element('dd', format(value), 'num')]),
      );
    } catch (error) {
      figures.replaceChildren(element('dt', 'none'), element('dd', error.message));
    }
  }

  function format(value) {
    return typeof value === 'number' && !Number.isInteger(value) ? value.toPrecision(4) : String(value ?? '—');
  }

  // ---- admin panels ----

  async function loadAdmin() {
    if (!token()) return;
    try {
      const [slowest, local, pairs] = await Promise.all([
        getJson('/admin/stats/slowest?limit=10'),
        getJson('/admin/metrics/local?seconds=60'),
        getJson('/admin/stats?limit=100'),
      ]);
      fillStatsPairs(pairs.items);
      $('admin-note').textContent = '';
      $('slowest').tBodies[0].replaceChildren(
        ...slowest.items.map((row) => rowOf([row.context, (row.average * 1000).toFixed(2)])),
      );
      $('routes').tBodies[0].replaceChildren(
        ...local.routes.map((row) => rowOf([row.route, row.requests, row.errors, row.avgMs.toFixed(2)])),
      );
    } catch (error) {
      $('admin-note').textContent = `admin panels: ${error.message}`;
    }
  }

  /** The context/type pairs recorded lately (admin): picking one shows its figures. */
  function fillStatsPairs(pairs) {
    const select = $('stats-pair');
    const chosen = select.value;
    select.replaceChildren(
      element('option', '—'),
      ...pairs.map((pair) => {
        const option = element('option', `${pair.context} · ${pair.type}`);
        option.value = JSON.stringify([pair.context, pair.type]);
        return option;
      }),
    );
    if (chosen) select.value = chosen;
    $('stats-pair-label').hidden = pairs.length === 0;
  }

  function rowOf(cells) {
    const tr = element('tr');
    tr.append(...cells.map((cell, i) => element('td', cell, i === 0 ? undefined : 'num')));
    return tr;
  }

  // ---- wiring ----

  function refresh() {
    void loadCounters().catch((error) => ($('counter-note').textContent = error.message));
    void loadAdmin();
  }

  $('token').value = token();
  $('token').addEventListener('change', () => {
    sessionStorage.setItem(TOKEN_KEY, $('token').value);
    // The stream reconnects with the new key; a page that could not list boards tries again.
    if (state.boards.length === 0) void loadBoards().catch((error) => setStatus(error.message));
    else startStream();
    refresh();
  });
  $('board').addEventListener('change', () => selectBoard($('board').value));
  $('window').addEventListener('change', () => selectWindow($('window').value));
  $('limit').addEventListener('change', () => {
    state.limit = Number($('limit').value);
    startStream();
  });
  $('counter').addEventListener('change', () => selectCounter($('counter').value));
  $('precision').addEventListener('change', () => void drawCounter());
  $('stats-form').addEventListener('submit', (event) => void showStats(event));
  $('stats-pair').addEventListener('change', () => {
    if ($('stats-pair').selectedIndex === 0) return;
    [$('stats-context').value, $('stats-type').value] = JSON.parse($('stats-pair').value);
    void showStats();
  });

  void loadBoards().catch((error) => setStatus(error.message));
  refresh();
  setInterval(refresh, REFRESH_MS);
})();
