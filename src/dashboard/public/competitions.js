// The dashboard's competitions panel, on the board the live top shows. A board with leagues: a tier's
// cohort (the one of the item clicked in the live top, else the first), its members ranked, and the
// moves of the latest closed period. A group board (groupOf): what it ranks, and joining or moving an
// item of its member board into a group, or taking it out (the live top shows the groups' scores).
// Apart from dashboard.js, which says the selection with trendboard:selection and trendboard:item events.
'use strict';

(() => {
  const REFRESH_MS = 2000;
  /** Moves of the closed period listed. */
  const MOVES_SHOWN = 20;
  const { element, fillSelect, format, getJson, path, send } = window.TrendboardKit;
  const $ = (id) => document.getElementById(id);
  /** The live top's selection: { board, leagues, groupOf }. */
  let selection = null;
  let running = 0;

  const at = (sec) => new Date(sec * 1000).toISOString().slice(0, 16).replace('T', ' ');

  function cohortRow(row) {
    const tr = element('tr');
    tr.dataset.item = row.item;
    tr.append(
      element('td', row.rank, 'num rank'),
      element('td', row.item, 'item'),
      element('td', format(row.score), 'num score'),
    );
    return tr;
  }

  function moveRow(move) {
    const tr = element('tr');
    tr.dataset.item = move.item;
    const up = selection.leagues.tiers.indexOf(move.toTier) > selection.leagues.tiers.indexOf(move.fromTier);
    tr.append(
      element('td', move.item, 'item'),
      element('td', `${move.fromTier} → ${move.toTier}`, `move ${up ? 'up' : 'down'}`),
      element('td', move.cohort, 'num cohort'),
      element('td', move.rank, 'num rank'),
    );
    return tr;
  }

  /** The cohort picked and the latest closed period's moves; a board with no closed period yet lists none. */
  async function refreshLeague() {
    const [board, tier, cohort] = [selection.board, $('league-tier').value, Number($('league-cohort').value) || 1];
    const page = await getJson(`/boards/${path(board, 'leagues', tier, String(cohort))}`);
    $('league-period').textContent = `${tier} · cohort ${cohort} · ${at(page.from)} – ${at(page.to)} UTC`;
    $('cohort').tBodies[0].replaceChildren(...page.items.map(cohortRow));
    const moves = await getJson(`/boards/${path(board)}/leagues/moves?limit=${MOVES_SHOWN}`).catch(() => null);
    $('league-moves-note').textContent = moves
      ? `moves of ${at(moves.from)} – ${at(moves.to)} UTC${moves.nextCursor === null ? '' : ' (first ' + MOVES_SHOWN + ')'}`
      : 'no closed period yet';
    $('league-moves').tBodies[0].replaceChildren(...(moves?.moves ?? []).map(moveRow));
  }

  async function refresh() {
    if (!selection?.leagues) return;
    running++;
    try {
      await refreshLeague();
      $('competitions-note').textContent = '';
    } catch (error) {
      $('competitions-note').textContent = `leagues: ${error.message}`;
    } finally {
      running--;
    }
  }

  function showGroupBoard(groupOf) {
    const decay =
      groupOf.decay === undefined || groupOf.decay === 1 ? '' : `, each next member weighed ×${groupOf.decay}`;
    $('group-of').textContent =
      `Ranks groups of ${groupOf.board} / ${groupOf.window} by the sum of their best ${groupOf.top} members' scores${decay}.`;
  }

  /** PUT (join, or move from another group) or DELETE (leave) a member, then say what was done. */
  async function member(event) {
    event.preventDefault();
    const method = event.submitter?.value === 'leave' ? 'DELETE' : 'PUT';
    const [group, item] = [$('member-group').value.trim(), $('member-item').value.trim()];
    try {
      await send(method, `/boards/${path(selection.board, 'members', group, item)}`);
      $('competitions-note').textContent = `${item} ${method === 'PUT' ? 'is in' : 'left'} ${group}`;
    } catch (error) {
      $('competitions-note').textContent = `members: ${error.message}`;
    }
  }

  function select(detail) {
    selection = detail;
    const { leagues, groupOf } = detail;
    $('competitions').hidden = !leagues && !groupOf;
    $('leagues').hidden = !leagues;
    $('groups').hidden = !groupOf;
    $('competitions-note').textContent = '';
    if (groupOf) showGroupBoard(groupOf);
    if (!leagues) return;
    fillSelect($('league-tier'), [...leagues.tiers].reverse(), leagues.tiers[0]);
    $('league-cohort').value = '1';
    void refresh();
  }

  /** An item clicked in the live top: its cohort this period, when it has one. */
  async function showItem(item) {
    if (!selection?.leagues) return;
    const standing = await getJson(`/boards/${path(selection.board, 'items', item)}/league`).catch(() => null);
    if (!standing) return;
    $('league-tier').value = standing.tier;
    $('league-cohort').value = String(standing.cohort);
    await refresh();
    for (const tr of $('cohort').tBodies[0].rows) tr.classList.toggle('selected', tr.dataset.item === item);
  }

  document.addEventListener('trendboard:selection', (event) => select(event.detail));
  document.addEventListener('trendboard:item', (event) => void showItem(event.detail.item));
  for (const id of ['league-tier', 'league-cohort']) $(id).addEventListener('change', () => void refresh());
  $('member-form').addEventListener('submit', (event) => void member(event));
  // A slow answer (a loaded service) is not raced by the next tick's: the tick waits for it.
  setInterval(() => running === 0 && void refresh(), REFRESH_MS);
})();
