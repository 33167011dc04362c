// The dashboard's retraction panel (admin token): start a retraction of an actor on a board, and watch
// each one started from this tab (state, events, amount) until it is done. Apart from dashboard.js;
// it shares the token typed into the page through kit.js. The ids it started are kept in this tab only.
'use strict';

(() => {
  const REFRESH_MS = 1000;
  const STARTED_KEY = 'trendboard-retractions';
  const { element, send: call, token } = window.TrendboardKit;
  const $ = (id) => document.getElementById(id);
  /** [{ board, id }], newest first. */
  const started = () => JSON.parse(sessionStorage.getItem(STARTED_KEY) || '[]');

  function rowOf(board, retraction) {
    const tr = element('tr');
    tr.dataset.retraction = retraction.id;
    tr.append(
      element('td', board, 'board'),
      element('td', retraction.actor, 'actor'),
      element('td', retraction.state, `state ${retraction.state}`),
      element('td', retraction.events, 'num events'),
      element('td', retraction.amount, 'num amount'),
      element('td', new Date(retraction.startedAt * 1000).toISOString(), 'muted'),
    );
    return tr;
  }

  async function refresh() {
    if (!token()) return;
    const rows = await Promise.all(
      started().map(({ board, id }) =>
        call('GET', `/admin/boards/${encodeURIComponent(board)}/retractions/${id}`)
          .then((retraction) => rowOf(board, retraction))
          .catch(() => undefined),
      ),
    );
    $('retractions-list').tBodies[0].replaceChildren(...rows.filter(Boolean));
  }

  async function start(event) {
    event.preventDefault();
    const board = $('retract-board').value.trim();
    const body = { actor: $('retract-actor').value.trim() };
    if ($('retract-block').value.trim()) body.block = $('retract-block').value.trim();
    try {
      const retraction = await call('POST', `/admin/boards/${encodeURIComponent(board)}/retractions`, body);
      sessionStorage.setItem(STARTED_KEY, JSON.stringify([{ board, id: retraction.id }, ...started()].slice(0, 20)));
      $('retractions-note').textContent = `retraction ${retraction.id} started`;
      await refresh();
    } catch (error) {
      $('retractions-note').textContent = `retraction: ${error.message}`;
    }
  }

  $('retract-form').addEventListener('submit', (event) => void start(event));
  $('token').addEventListener('change', () => void refresh());
  void refresh();
  setInterval(() => void refresh(), REFRESH_MS);
})();
