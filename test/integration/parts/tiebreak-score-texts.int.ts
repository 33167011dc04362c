import { DomainError } from '../../../src/common/errors';
import { useRankingService } from '../../../harness/ranking';

/**
 * A tiebreak board writes each score's text from tables (tiebreak_lib's integer_text, issue #45): the
 * live page, a snapshot and a calendar archive list every score exactly, from the greatest to the least
 * a board takes, across the groups of three digits and their zeros, with ranks shared by equal pairs;
 * an archive written in chunks ranks a row sharing its pair with the last row of the chunk before alike.
 */
const DAY_MS = 86_400_000;
const START_MS = 19_000 * DAY_MS + 3_600_000;
const MAX = 1_000_000_000_000_000;
/** [item, score, tiebreak], best first on a max board whose higher tiebreak comes first (equal pairs: ids descending). */
const ROWS: [string, number, number][] = [
  ['max', MAX, 0],
  ['long', 123_456_789_012_345, 0],
  ['million', 1_000_000, 0],
  ['nines', 999_999, 0],
  ['thousand1', 1_001, 0],
  ['thousandB', 1_000, 5],
  ['thousandA', 1_000, 5],
  ['thousandC', 1_000, 4],
  ['under', 999, 0],
  ['seven', 7, 0],
  ['zero', 0, 0],
  ['minus1', -1, 0],
  ['minus999', -999, 0],
  ['minus1000', -1_000, 0],
  ['minusMillion1', -1_000_001, 0],
  ['min', -MAX, 0],
];
/** Competition ranks on the pair: thousandB and thousandA share theirs. */
const RANKS = ROWS.map((_, i) => (i === 6 ? 6 : i + 1));

describe('tiebreak score texts (single)', () => {
  const setup = useRankingService('single');
  const { clock } = setup;

  it('lists every score exactly live, in a snapshot and in a calendar archive', async () => {
    clock.setMs(START_MS);
    const name = 'tbtexts';
    const windows = [
      { name: 'w', period: '1h', interval: '1m', snapshots: { keep: 3, top: 20 } },
      { name: 'day', calendar: 'day', archive: { keep: 2, top: 20 } },
    ];
    await setup.ranking.putBoard({ name, windows, aggregate: 'max', tiebreak: { order: 'desc' } });
    for (const [item, score, tiebreak] of ROWS)
      await setup.ranking.score(name, item, score, undefined, undefined, undefined, tiebreak);
    const expected = ROWS.map(([item, score, tiebreak], i) => ({ rank: RANKS[i], item, score, tiebreak }));
    const rowsOf = (items: { rank: number; item: string; score: number; tiebreak?: number }[]) =>
      items.map(({ rank, item, score, tiebreak }) => ({ rank, item, score, tiebreak }));

    expect(rowsOf((await setup.ranking.top(name, 'w', 0, 20)).items)).toEqual(expected);
    clock.advanceMs(60_000);
    await setup.ranking.top(name, 'w', 0, 20);
    expect(rowsOf((await setup.ranking.history(name, 'w', undefined)).items)).toEqual(expected);
    clock.advanceMs(DAY_MS);
    await setup.ranking.top(name, 'day', 0, 20);
    const archives = await setup.ranking.archives(name, 'day', 1, undefined);
    expect(rowsOf(archives.periods[0].items)).toEqual(expected);
  });
});

describe('tiebreak archive ranks across chunks (single)', () => {
  const setup = useRankingService('single', { EXPIRE_CHUNK: '10' });
  const { clock } = setup;

  it("ranks equal pairs alike across the archive's chunks (each item's previousRank)", async () => {
    clock.setMs(START_MS);
    const name = 'tbchunks';
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 2, top: 30 } }];
    await setup.ranking.putBoard({ name, windows, aggregate: 'max', tiebreak: { order: 'desc' } });
    // Pairs in runs of 4: rows 9 and 10 (0-based) share theirs across the first chunk's end.
    const items = Array.from({ length: 30 }, (_, i) => ({
      item: `c${String(i).padStart(2, '0')}`,
      group: Math.floor(i / 4),
    }));
    for (const { item, group } of items)
      await setup.ranking.score(name, item, 100 - group, undefined, undefined, undefined, 0);
    clock.advanceMs(DAY_MS);
    let listed = 0;
    for (let calls = 0; listed === 0; calls++) {
      expect(calls).toBeLessThan(100);
      try {
        listed = (await setup.ranking.archives(name, 'day', 1, undefined)).periods.length;
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'WINDOW_DRAINING')) throw error;
      }
    }
    // The new day lists each item again, beside its rank in the archive.
    for (const { item } of items) await setup.ranking.score(name, item, 1, undefined, undefined, undefined, 0);
    const top = await setup.ranking.top(name, 'day', 0, 30);
    const previous = Object.fromEntries(top.items.map((row) => [row.item, row.previousRank]));
    expect(previous).toEqual(Object.fromEntries(items.map(({ item, group }) => [item, 1 + 4 * group])));
  });
});
