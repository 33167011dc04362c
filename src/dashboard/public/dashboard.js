// trendboard's live dashboard: plain browser JavaScript served by the app (no build step, no CDN).
// The live top comes from feed.js (the board's stream), its table from rows.js. Charts are hand-drawn SVG.
'use strict';

(() => {
  /** How often panels refresh. */
  const REFRESH_MS = 5000;
  /** Scores of an item kept from the stream when its window keeps no snapshots. */
  const LIVE_POINTS = 60;

  const { dataEntries, element, fillSelect, format, getAllPages, lineChart, plural } = window.TrendboardKit;
  const { TOKEN_KEY, getJson, path, token } = window.TrendboardKit;
  const { columnsOf, headerOf, orderNote, rowOf } = window.TrendboardRows;

  const $ = (id) => document.getElementById(id);
  const query = new URLSearchParams(location.search);
  const state = {
    ...{ boards: [], board: null, window: null, limit: 10, stream: null, selected: null, live: new Map() },
    // The `from` of the listing last shown: a calendar window's new period re-reads its archives.
    periodFrom: null,
  };
  /** The segment the listings read ('' : the whole board); a board taking segments shows the picker. */
  state.segment = query.get('segment') ?? '';
  /** The metric a multi-metric board's windows rank by ('': the board's first, what a stream naming none serves). */
  state.metric = query.get('metric') ?? '';

  function setStatus(text, live = false) {
    $('status').textContent = text;
    $('status').classList.toggle('live', live);
  }

  // ---- boards and the live top ----

  async function loadBoards() {
    // Every board, page after page: a service with more than a page's worth lists them all.
    const boards = await getAllPages('/boards?limit=1000', 'boards');
    state.boards = boards;
    $('empty').hidden = boards.length > 0;
    if (boards.length === 0) {
      setStatus('no boards yet');
      showEmpty(
        'No board yet. Create one with ',
        code('PUT /admin/boards/:board'),
        " (the README's walk-through), or run ",
        code('npm run demo'),
        ' to watch a board with live data. It shows here as soon as it exists.',
      );
      return;
    }
    fillSelect(
      $('board'),
      boards.map((b) => b.name),
      state.board ?? query.get('board') ?? undefined,
    );
    selectBoard($('board').value, query.get('window') ?? undefined);
  }

  const code = (text) => element('code', text);

  function showEmpty(...parts) {
    $('empty').replaceChildren(...parts);
    $('empty').hidden = false;
  }

  /** The windows and views of a board: each is read the same way. */
  function readablesOf(board) {
    return [...board.windows, ...(board.views ?? [])];
  }

  /**
   * A window says whether it keeps history; a calendar window its period, zone and whether it keeps
   * archives; a view says its mode and the window it reads.
   */
  function labelOf(readable) {
    if (readable.mode) {
      const counts = readable.positive ? ` (${readable.positive}/${readable.negative})` : '';
      return { value: readable.name, label: `${readable.name} · ${readable.mode} view of ${readable.window}${counts}` };
    }
    if (readable.calendar) {
      const archived = readable.archive ? ', archived' : '';
      return {
        value: readable.name,
        label: `${readable.name} · ${readable.calendar} in ${readable.timeZone}${archived}`,
      };
    }
    return { value: readable.name, label: readable.snapshots ? `${readable.name} · history kept` : readable.name };
  }

  function readableNamed(name) {
    const board = state.boards.find((b) => b.name === state.board);
    return readablesOf(board ?? { windows: [] }).find((w) => w.name === name);
  }

  function selectBoard(name, windowName) {
    if (state.board !== null && state.board !== name) [state.segment, state.metric] = ['', ''];
    state.board = name;
    const board = state.boards.find((b) => b.name === name);
    fillSelect($('window'), readablesOf(board).map(labelOf), windowName);
    fillSelect($('metric'), board.metrics ?? [], state.metric || undefined);
    void loadSegments();
    selectWindow($('window').value);
  }

  /** The segment picker: the board's live segments (GET /boards/:board/segments), hidden on a board without. */
  async function loadSegments() {
    const board = state.boards.find((b) => b.name === state.board);
    $('segment-label').hidden = !board?.segments;
    if (!board?.segments) return;
    const { segments } = await getJson(`/boards/${path(board.name)}/segments?limit=1000`);
    const options = segments.map((s) => ({ value: s.name, label: `${s.name} · ${s.items} items` }));
    // A segment picked (or named in the page's address) stays pickable while it holds nothing.
    if (state.segment && !segments.some((s) => s.name === state.segment))
      options.unshift({ value: state.segment, label: `${state.segment} · empty` });
    fillSelect($('segment'), [{ value: '', label: 'whole board' }, ...options], state.segment);
  }

  /** The query part naming the segment read, if any. */
  function segmentQuery() {
    return state.segment ? `&segment=${path(state.segment)}` : '';
  }

  /** The query part naming the metric ranked, when not the board's first. */
  function metricQuery() {
    return namedMetric() ? `&metric=${path(namedMetric())}` : '';
  }

  function selectWindow(name) {
    state.window = name;
    state.selected = null;
    state.live.clear();
    $('item-name').textContent = '';
    $('sparkline').replaceChildren();
    $('item-data').replaceChildren();
    $('item-note').textContent = 'Click a row to see its rank over recent slots.';
    state.periodFrom = null;
    // A view ranks by its own formula: the metric picker is for the board's windows.
    const board = state.boards.find((b) => b.name === state.board);
    $('metric-label').hidden = !board?.metrics || Boolean(readableNamed(name)?.mode);
    $('top').tHead.replaceChildren(headerOf(columnsOf(board, readableNamed(name), namedMetric())));
    void loadArchives();
    startStream();
    document.dispatchEvent(new CustomEvent('trendboard:selection', { detail: selection(board, name) }));
  }

  /** What the other panels read of the selection: the board, the readable, the window under it, review, leagues, groupOf. */
  function selection(board, name) {
    const readable = readableNamed(name);
    const review = Boolean(board?.moderation?.review);
    const { leagues, groupOf } = board ?? {};
    return {
      board: state.board,
      window: name,
      baseWindow: readable?.mode ? readable.window : name,
      review,
      leagues,
      groupOf,
    };
  }

  /**
   * The metric ranked, when it is not the board's first: the stream and the item read name it; a stream
   * naming none ranks by the first (and is the one other pages watching the board share).
   */
  function namedMetric() {
    const board = state.boards.find((b) => b.name === state.board);
    const metric = $('metric-label').hidden ? '' : state.metric;
    return metric && metric !== board?.metrics?.[0] ? metric : '';
  }

  function startStream() {
    state.stream?.abort();
    const controller = new AbortController();
    state.stream = controller;
    const [board, windowName] = [path(state.board), path(state.window)];
    const listing = `window=${windowName}&limit=${state.limit}${segmentQuery()}${metricQuery()}`;
    const handlers = { render: renderTop, setStatus };
    void window.TrendboardFeed.stream(`/boards/${board}/stream?${listing}`, handlers, controller.signal);
  }

  /** A listing's span: times of day for a rolling window; a calendar window's period in its own zone. */
  function spanText(listing, readable) {
    if (listing.from === null) return 'all time';
    if (!readable?.calendar)
      return `${new Date(listing.from * 1000).toLocaleTimeString()} – ${new Date(listing.to * 1000).toLocaleTimeString()}`;
    const local = { timeZone: readable.timeZone, dateStyle: 'medium', timeStyle: 'short' };
    const at = (sec) => new Date(sec * 1000).toLocaleString(undefined, local);
    return `${readable.calendar} ${at(listing.from)} – ${at(listing.to)} (${readable.timeZone})`;
  }

  function renderTop(listing) {
    // The stream's listing names no mode: the board's config says what the window is.
    const readable = readableNamed(listing.window);
    const mode = listing.mode ?? readable?.mode;
    const kind = mode ? ` (${mode} view)` : '';
    const draining = listing.draining ? ' · catching up: an expired slot is still being cleared' : '';
    const segment = listing.segment ? ` · segment ${listing.segment}` : '';
    const version = listing.version === undefined ? '' : ` · version ${listing.version}`;
    const board = state.boards.find((b) => b.name === listing.board);
    const columns = columnsOf(board, readable, namedMetric());
    $('span').textContent =
      `${listing.board} / ${listing.window}${kind}${segment}: ${spanText(listing, readable)}${orderNote(columns)}${version}${draining}`;
    // A calendar period ended (the stream delivers its reset): the period just closed is archived now.
    if (readable?.archive && state.periodFrom !== null && state.periodFrom !== listing.from) void loadArchives();
    state.periodFrom = listing.from;
    const rows = listing.items.map((row) => {
      const tr = rowOf(row, columns);
      if (row.item === state.selected) tr.classList.add('selected');
      // A row's buttons (moderation.js) act on the item; the rest of the row selects it.
      tr.addEventListener('click', (event) => event.target.closest('button') || selectItem(row.item));
      remember(row);
      return tr;
    });
    $('top').tHead.replaceChildren(headerOf(columns));
    $('top').tBodies[0].replaceChildren(...rows);
    $('empty').hidden = rows.length > 0;
    if (rows.length === 0) {
      const where = `${listing.board} / ${listing.window}`;
      if (mode) showEmpty(`Nothing in ${where} yet: it lists items as writes reach its window.`);
      else
        showEmpty(
          `No data in ${where} yet: write to it (`,
          code(`POST /boards/${listing.board}/items/:item/increment`),
          ') and it shows here live.',
        );
    }
    if (state.selected && !keepsSnapshots()) drawSparkline(state.live.get(state.selected) ?? [], 'score');
  }

  function remember(row) {
    const points = state.live.get(row.item) ?? [];
    points.push({ at: Date.now() / 1000, rank: row.rank, score: row.score });
    state.live.set(row.item, points.slice(-LIVE_POINTS));
  }

  function keepsSnapshots() {
    return Boolean(readableNamed(state.window)?.snapshots);
  }

  async function selectItem(item) {
    state.selected = item;
    for (const tr of $('top').tBodies[0].rows) tr.classList.toggle('selected', tr.dataset.item === item);
    $('item-name').textContent = item;
    document.dispatchEvent(new CustomEvent('trendboard:item', { detail: { item } }));
    // The item's data (PUT /boards/:board/items/:item/data), where it has some.
    void getJson(
      `/boards/${path(state.board, 'items', item)}?window=${path(state.window)}&data=true${segmentQuery()}${metricQuery()}`,
    ).then(
      (standing) => state.selected === item && $('item-data').replaceChildren(...dataEntries(standing.data)),
      () => $('item-data').replaceChildren(),
    );
    if (!keepsSnapshots()) {
      const view = readableNamed(state.window);
      $('item-note').textContent = view?.mode
        ? `Score as the stream showed it (a view keeps no history; its window "${view.window}" does when it keeps snapshots).`
        : 'Score as the stream showed it (this window keeps no snapshots).';
      drawSparkline(state.live.get(item) ?? [], 'score');
      return;
    }
    const history = await getJson(
      `/boards/${path(state.board, 'items', item, 'history')}?window=${path(state.window)}${segmentQuery()}`,
    );
    const points = history.points.filter((point) => point.rank !== null);
    $('item-note').textContent =
      history.points.length === 0
        ? 'No slot boundary passed yet in this window: the rank now.'
        : `Rank at each of the last ${plural(history.points.length, 'slot boundary', 'slot boundaries')} (${points.length} in the top), then now.`;
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

  // ---- archives of a calendar window ----

  /** Rows of an archived period listed in the panel. */
  const ARCHIVE_ROWS = 5;

  /** The newest archived periods of the selected window, when it keeps archives (the panel hides otherwise). */
  async function loadArchives() {
    const readable = readableNamed(state.window);
    $('archives').hidden = !readable?.archive;
    if (!readable?.archive) return;
    const [board, windowName] = [state.board, state.window];
    $('archives-window').textContent = `${board} / ${windowName}`;
    try {
      const page = await getJson(`/boards/${path(board)}/archives?window=${path(windowName)}&limit=5${segmentQuery()}`);
      if (state.board !== board || state.window !== windowName) return;
      $('archives-note').textContent =
        page.periods.length > 0
          ? `The final standings of the last ${page.periods.length} closed period(s), newest first (${readable.archive.keep} kept).`
          : `No closed period archived yet: each ${readable.calendar}'s final top ${readable.archive.top} is kept when it ends.`;
      $('archives-list').replaceChildren(...page.periods.map((period) => archivedPeriod(period, readable)));
    } catch (error) {
      $('archives-note').textContent = `archives: ${error.message}`;
    }
  }

  function archivedPeriod(period, readable) {
    const list = element('ol');
    list.append(
      ...period.items.slice(0, ARCHIVE_ROWS).map((row) => {
        const li = element('li');
        li.append(element('span', row.item, 'item'), ' ', element('span', format(row.score), 'num'));
        return li;
      }),
    );
    const block = element('div', undefined, 'archive');
    block.append(element('h3', spanText(period, readable)), list);
    return block;
  }

  // ---- wiring ----

  function refresh() {
    // An empty service is looked at again: a board made meanwhile (or by `npm run demo`) shows up by itself.
    if (state.boards.length === 0) void loadBoards().catch((error) => setStatus(error.message));
    else void loadSegments().catch((error) => setStatus(error.message));
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
  $('segment').addEventListener('change', () => {
    state.segment = $('segment').value;
    selectWindow(state.window);
  });
  $('metric').addEventListener('change', () => {
    state.metric = $('metric').value;
    selectWindow(state.window);
  });
  $('limit').addEventListener('change', () => {
    state.limit = Number($('limit').value);
    startStream();
  });

  refresh();
  setInterval(refresh, REFRESH_MS);
})();
