// The dashboard's counters, stats and admin panels (the slowest routes, per-route requests and errors):
// apart from dashboard.js (the boards' panels); it shares the token typed into the page and the API
// reads through kit.js.
'use strict';

(() => {
  const REFRESH_MS = 5000;
  /** The counter precision shown first (when the counter keeps it): minutes read well on a small chart. */
  const DEFAULT_PRECISION = '60';
  const { element, fillSelect, format, getAllPages, getJson, lineChart, path, plural, token } = window.TrendboardKit;
  const $ = (id) => document.getElementById(id);
  const state = { counters: [] };

  // ---- counters ----

  async function loadCounters() {
    const counters = await getAllPages('/counters?limit=1000', 'counters');
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
        samples.length > 0,
      ),
    );
    // The last sample is the current period, still counting: drawn dashed, not as a fall.
    $('counter-note').textContent =
      `${plural(samples.length, 'sample')} of ${precision} s, the last (dashed) still counting`;
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

  function refresh() {
    void loadCounters().catch((error) => ($('counter-note').textContent = error.message));
    void loadAdmin();
  }

  $('token').addEventListener('change', refresh);
  $('counter').addEventListener('change', () => selectCounter($('counter').value));
  $('precision').addEventListener('change', () => void drawCounter());
  $('stats-form').addEventListener('submit', (event) => void showStats(event));
  $('stats-pair').addEventListener('change', () => {
    if ($('stats-pair').selectedIndex === 0) return;
    [$('stats-context').value, $('stats-type').value] = JSON.parse($('stats-pair').value);
    void showStats();
  });

  refresh();
  setInterval(refresh, REFRESH_MS);
})();
