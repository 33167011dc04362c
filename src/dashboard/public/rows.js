// The live top's table: its header and rows, shaped by the board's options (metrics, tiebreak, order)
// and the view read (wilson and controversial rows carry both counts). Apart from dashboard.js (the
// listing's stream and the panels around it).
'use strict';

window.TrendboardRows = (() => {
  const { element, format, movementOf, token } = window.TrendboardKit;

  /**
   * What the table shows of a board's readable: one column per metric its rows carry (the one ranked
   * marked), the tiebreak and which way it wins, whether lower scores rank first, and the hide button
   * (with a key or token typed in: moderation is the admin's).
   */
  function columnsOf(board, readable, metric) {
    const twoCounts = readable?.positive ? [readable.positive, readable.negative] : undefined;
    return {
      metrics: twoCounts ?? (readable?.mode ? [] : (board?.metrics ?? [])),
      ranked: readable?.mode ? undefined : metric || board?.metrics?.[0],
      tiebreak: board?.tiebreak?.order,
      ascending: board?.order === 'asc',
      moderate: Boolean(token()),
    };
  }

  /** A score column's header says which way ranks go when lower is better. */
  function headerOf(columns) {
    const tr = element('tr');
    tr.append(element('th', '#'), element('th', 'move'), element('th', 'item'));
    for (const name of columns.metrics) {
      const th = element('th', name === columns.ranked ? `${name} ▾` : name, 'num metric');
      if (name === columns.ranked) th.title = 'the metric the rows are ranked by';
      tr.append(th);
    }
    tr.append(element('th', columns.ascending ? 'score (lowest first)' : 'score', 'num score'));
    if (columns.tiebreak)
      tr.append(element('th', `tiebreak (${columns.tiebreak === 'asc' ? 'lower' : 'higher'} wins a tie)`, 'num'));
    if (columns.moderate) tr.append(element('th', 'moderation'));
    return tr;
  }

  /** A listing's row; a rising view's says why the item is listed. */
  function rowOf(row, columns) {
    const move = movementOf(row);
    const tr = element('tr');
    tr.dataset.item = row.item;
    const item = element('td', row.item, 'item');
    if (row.phase)
      item.append(element('small', ` ${row.observed} vs ${format(row.expected)} expected · ${row.phase}`, 'muted'));
    tr.append(element('td', row.rank, 'rank'), element('td', move.text, `move ${move.className}`), item);
    for (const name of columns.metrics) {
      const cell = element('td', format(row.metrics?.[name]), 'num metric');
      cell.dataset.metric = name;
      tr.append(cell);
    }
    tr.append(element('td', format(row.score), 'num score'));
    if (columns.tiebreak) tr.append(element('td', format(row.tiebreak), 'num tiebreak'));
    if (columns.moderate) {
      const cell = element('td');
      const hide = element('button', 'hide', 'hide');
      Object.assign(hide.dataset, { item: row.item, action: 'hidden' });
      hide.title = 'hide it from every listing of the board (its counts keep accruing)';
      cell.append(hide);
      tr.append(cell);
    }
    if (row.previousRank !== null && row.previousRank !== undefined) tr.title = `previous rank ${row.previousRank}`;
    return tr;
  }

  /** The span line's note on the ranking: lower first, the metric ranked. */
  function orderNote(columns) {
    const notes = [];
    if (columns.ranked) notes.push(`ranked by ${columns.ranked}`);
    if (columns.ascending) notes.push('lower scores rank first');
    return notes.map((note) => ` · ${note}`).join('');
  }

  return { columnsOf, headerOf, orderNote, rowOf };
})();
