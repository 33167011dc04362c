// The dashboard's stream-ingest panel (admin token): every source declared on GET /admin/ingest with
// its lag, events applied and dead-lettered, throughput and last error. Apart from dashboard.js (the
// boards' panels); it shares the token typed into the page through kit.js.
'use strict';

(() => {
  /** Ingest moves fast: read more often than the other panels. */
  const REFRESH_MS = 2000;
  const { authHeaders, element, format, token } = window.TrendboardKit;
  const $ = (id) => document.getElementById(id);

  /** The figure cells of a source's row, by the class the page (and its test) reads them with. */
  function rowOf(source) {
    const { declaration } = source;
    const stream = `${declaration.kind === 'nats' ? 'JetStream' : 'Redis'} ${declaration.stream}`;
    const error = source.lastError ? `${source.lastError} (${new Date(source.lastErrorAt * 1000).toISOString()})` : '—';
    const cells = [
      element('td', source.name, 'name'),
      element('td', stream),
      element('td', source.consumer ?? 'none'),
      element('td', format(source.lag), 'num lag'),
      element('td', source.applied, 'num applied'),
      element('td', source.deadLettered, 'num dead'),
      element('td', format(source.throughput), 'num throughput'),
      element('td', error, source.lastError ? 'error' : 'muted'),
    ];
    const tr = element('tr');
    tr.dataset.source = source.name;
    tr.append(...cells);
    return tr;
  }

  async function loadSources() {
    if (!token()) return;
    try {
      const response = await fetch('/admin/ingest', { headers: authHeaders() });
      const body = await response.json().catch(() => ({}));
      if (!response.ok) throw new Error(body.message || `${response.status} ${response.statusText}`);
      $('ingest-note').textContent =
        body.sources.length === 0 ? 'No stream source declared: PUT /admin/ingest/:name (see docs/ingest.md).' : '';
      $('ingest-sources').tBodies[0].replaceChildren(...body.sources.map(rowOf));
    } catch (error) {
      $('ingest-note').textContent = `stream ingest: ${error.message}`;
    }
  }

  $('token').addEventListener('change', () => void loadSources());
  void loadSources();
  setInterval(() => void loadSources(), REFRESH_MS);
})();
