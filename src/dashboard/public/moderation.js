// The dashboard's moderation panel (admin token), on the board the live top shows: hide an item from
// its row there, see each item moderated from this tab with its state, score and rank (allow, hide or
// clear it), and on a board with "moderation": { "review": true } the review queue, best first, with
// allow and hide buttons. Apart from dashboard.js, which says the selection with a trendboard:selection
// event; it shares the token typed into the page through kit.js. What it moderated is kept in this tab.
'use strict';

(() => {
  const REFRESH_MS = 2000;
  /** Items moderated from this tab kept listed, and the review queue's rows shown. */
  const KEPT_ITEMS = 50;
  const QUEUE_ROWS = 20;
  const MODERATED_KEY = 'trendboard-moderated';
  const { element, format, getJson, path, send, token } = window.TrendboardKit;
  const $ = (id) => document.getElementById(id);
  /** The live top's selection: { board, window, baseWindow (a view's window), review }. */
  let selection = null;
  /** Refreshes started, and under way: one answered after a later one started (a click's) is not shown. */
  let [refreshes, running] = [0, 0];
  /** [{ board, item, state }], newest first. */
  const moderated = () => JSON.parse(sessionStorage.getItem(MODERATED_KEY) || '[]');

  function remember(board, item, state) {
    const others = moderated().filter((entry) => entry.board !== board || entry.item !== item);
    const kept = state ? [{ board, item, state }, ...others] : others;
    sessionStorage.setItem(MODERATED_KEY, JSON.stringify(kept.slice(0, KEPT_ITEMS)));
  }

  /** A button acting on an item: `action` is a state to set, or clear (back to the board's default). */
  function button(item, action, label) {
    const node = element('button', label, action);
    Object.assign(node.dataset, { item, action });
    return node;
  }

  function actionsOf(item, shown) {
    const cell = element('td', undefined, 'actions');
    for (const [action, label] of [
      ['allowed', 'allow'],
      ['hidden', 'hide'],
      ['clear', 'clear'],
    ])
      if (shown.includes(action)) cell.append(button(item, action, label));
    return cell;
  }

  /** An item moderated from this tab: its state, and its standing in the selected window (hidden: no rank). */
  async function moderatedRow({ board, item, state }) {
    const standing = await getJson(`/boards/${path(board, 'items', item)}?window=${path(selection.window)}`).catch(
      () => ({ score: undefined, rank: null }),
    );
    const tr = element('tr');
    tr.dataset.item = item;
    tr.append(
      element('td', item, 'item'),
      element('td', standing.hidden && state === 'allowed' ? 'allowed (hidden by its group)' : state, `state ${state}`),
      element('td', format(standing.score), 'num score'),
      element('td', standing.rank ?? '—', 'num rank'),
      actionsOf(item, [state === 'hidden' ? 'allowed' : 'hidden', 'clear']),
    );
    return tr;
  }

  function queueRow(row) {
    const tr = element('tr');
    tr.dataset.item = row.item;
    tr.append(
      element('td', row.item, 'item'),
      element('td', format(row.score), 'num score'),
      actionsOf(row.item, ['allowed', 'hidden']),
    );
    return tr;
  }

  async function loadQueue(board, windowName) {
    const page = await getJson(
      `/admin/boards/${path(board)}/moderation/queue?window=${path(windowName)}&limit=${QUEUE_ROWS}`,
    );
    return page.items.map(queueRow);
  }

  async function refresh() {
    if (!token() || !selection) return;
    const run = ++refreshes;
    running++;
    const { board, baseWindow, review } = selection;
    $('moderation-board').textContent = `${board} / ${selection.window}`;
    try {
      const mine = moderated().filter((entry) => entry.board === board);
      const [rows, queue] = await Promise.all([
        Promise.all(mine.map(moderatedRow)),
        review ? loadQueue(board, baseWindow) : [],
      ]);
      if (run !== refreshes) return;
      $('moderated').tBodies[0].replaceChildren(...rows);
      $('review-queue').hidden = !review;
      $('review-queue').tBodies[0].replaceChildren(...queue);
      $('moderation-note').textContent = noteOf(mine.length, review, queue.length);
    } catch (error) {
      $('moderation-note').textContent = `moderation: ${error.message}`;
    } finally {
      running--;
    }
  }

  function noteOf(moderatedCount, review, waiting) {
    const hint = moderatedCount === 0 ? 'Hide an item with its button in the live top. ' : '';
    if (!review) return hint;
    return `${hint}This board lists an item only once allowed${waiting === 0 ? ': nothing waits for review.' : '.'}`;
  }

  /** A click on a moderation button anywhere (live top rows, this panel): the state set, then all shown again. */
  async function act(event) {
    const target = event.target.closest('button[data-item]');
    if (!target || !selection) return;
    const { item, action } = target.dataset;
    const url = `/admin/boards/${path(selection.board)}/moderation/items/${path(item)}`;
    try {
      if (action === 'clear') await send('DELETE', url);
      else await send('PUT', url, { state: action });
      remember(selection.board, item, action === 'clear' ? undefined : action);
      await refresh();
    } catch (error) {
      $('moderation-note').textContent = `moderation: ${error.message}`;
    }
  }

  document.addEventListener('trendboard:selection', (event) => {
    selection = event.detail;
    void refresh();
  });
  for (const id of ['top', 'moderated', 'review-queue']) $(id).addEventListener('click', (event) => void act(event));
  $('token').addEventListener('change', () => void refresh());
  // A slow answer (a loaded service) is not raced by the next tick's: the tick waits for it.
  setInterval(() => running === 0 && void refresh(), REFRESH_MS);
})();
