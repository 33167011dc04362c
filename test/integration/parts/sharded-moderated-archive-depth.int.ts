import { ADMIN } from '../../../harness/app';
import { ARCHIVE_ROWS_PER_READ, CALENDAR_MESSAGES as C } from '../../../src/ranking/options/calendar/calendar.limits';
import { SHARDS_PER_BOARD } from '../../../src/ranking/core/ranking.limits';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { useSharedTestApps } from '../../support/app-world';

/**
 * The depth bound of a moderated sharded board's archive pages (issue #49 with #45's bounds), through
 * the HTTP route on a real board: each shard answers its rows from the top through its
 * (offset + limit + 1)-th row shown now, those left out too, but at most its share of
 * ARCHIVE_ROWS_PER_READ (archives.store.ts); a page whose rows lie past a shard stopped there is a 422
 * REQUEST_TOO_COSTLY. A review board of the most shards holds a period whose rows all sit on shard 0,
 * the allowed ones at its positions 100, 200, 300 and 350: the page ending at the 2nd shown row reads
 * through the 3rd (position 300, within the 312-row share) and answers 200; the page ending at the 3rd
 * needs the 4th (position 350): the shard stops at 312 rows and the page is refused.
 */
const T0 = Date.UTC(2026, 2, 2, 12);
const DAY_MS = 86_400_000;
const SHARDS = SHARDS_PER_BOARD.max;
/** Rows of a period one shard of the board answers an `archive` read (one period). */
const SHARE = Math.floor(ARCHIVE_ROWS_PER_READ / SHARDS);
const ROWS = 400;
/** Shard 0's positions (from 1) of the allowed items. */
const ALLOWED_AT = [100, 200, 300, 350];
/** The first ROWS ids of shard 0, best first. */
const ITEMS = Array.from({ length: 100 * ROWS }, (_, n) => `a${n}`)
  .filter((item) => shardOf(item, SHARDS) === 0)
  .slice(0, ROWS);
const ALLOWED = ALLOWED_AT.map((position) => ITEMS[position - 1]);
const score = (position: number) => 10 * (ROWS + 1 - position);

const appFor = useSharedTestApps(T0, { EXPIRE_CHUNK: '100' });

describe('a moderated archive page of a sharded board past a shard share (single, 64 shards)', () => {
  const { clock, http } = appFor('single');

  beforeAll(async () => {
    expect(ITEMS).toHaveLength(ROWS);
    expect(SHARE).toBeGreaterThan(ALLOWED_AT[2]);
    expect(SHARE).toBeLessThan(ALLOWED_AT[3]);
    const windows = [{ name: 'day', calendar: 'day', archive: { keep: 2, top: ROWS } }];
    await http()
      .put('/admin/boards/deep')
      .set(ADMIN)
      .send({ windows, shards: SHARDS, moderation: { review: true } })
      .expect(201);
    const items = ITEMS.map((item, n) => ({ item, amount: score(n + 1) }));
    await http().post('/boards/deep/increments').send({ items }).expect(200);
    for (const item of ALLOWED)
      await http().put(`/admin/boards/deep/moderation/items/${item}`).set(ADMIN).send({ state: 'allowed' }).expect(204);
    clock.advanceMs(DAY_MS);
  });

  it('answers the pages ending within the share and refuses the first one past it with 422 REQUEST_TOO_COSTLY', async () => {
    const rows = (positions: number[]) =>
      positions.map((position) => ({
        rank: ALLOWED_AT.indexOf(position) + 1,
        item: ITEMS[position - 1],
        score: score(position),
      }));

    const first = await read('offset=0&limit=2');
    expect([first.status, first.body.items, first.body.nextOffset]).toEqual([200, rows([100, 200]), 2]);
    // The deepest page answered: it ends at the 2nd shown row, the 3rd (position 300) tells that more follow.
    const deepest = await read('offset=1&limit=1');
    expect([deepest.status, deepest.body.items, deepest.body.nextOffset]).toEqual([200, rows([200]), 2]);

    for (const page of ['offset=2&limit=1', 'offset=0&limit=3', 'offset=1&limit=5']) {
      const end = Number(/offset=(\d+)/.exec(page)![1]) + Number(/limit=(\d+)/.exec(page)![1]);
      const refused = await read(page);
      expect([page, refused.status, refused.body.code, refused.body.message]).toEqual([
        page,
        422,
        'REQUEST_TOO_COSTLY',
        C.moderatedArchiveTooDeep(end, ARCHIVE_ROWS_PER_READ),
      ]);
    }
  }, 120_000);

  /** An archive read sent again while the closed period is still being archived (503 WINDOW_DRAINING). */
  async function read(query: string): Promise<{ status: number; body: Record<string, unknown> }> {
    for (let attempt = 0; ; attempt++) {
      const { status, body } = await http().get(`/boards/deep/archive?window=day&${query}`);
      if (status !== 503) return { status, body };
      if (attempt >= 20) throw new Error(`archive?${query} answered ${status}`);
    }
  }
});
