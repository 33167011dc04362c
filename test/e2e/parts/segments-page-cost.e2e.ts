import { createBoard } from '../../../harness/app';
import { Topology } from '../../../harness/redis';
import { T0, useApp } from '../../support/e2e';

const SEGMENTS = Array.from({ length: 100 }, (_, i) => `s${String(i).padStart(3, '0')}`);
/** 800 items, each in 8 segments: every segment holds 64 items, spread over the 64 shards. */
const ENTRIES = Array.from({ length: 800 }, (_, j) => ({
  item: `i${j}`,
  segments: Array.from({ length: 8 }, (_, k) => SEGMENTS[(8 * j + k) % SEGMENTS.length]),
}));

type Page = { segments: Array<{ name: string; items: number }>; nextCursor: string | null };

/**
 * A segments page of a 64-shard board is bounded per shard call (issue 45): each shard looks at its
 * share of SEGMENT_PAGE_UNITS_PER_REQUEST (6 000 / 64 = 93 units: 46 segments of one window), so the
 * page ends at the first name a shard did not look past, and it spends 30 reads of the read budget.
 */
describe.each<[Topology]>([['single'], ['cluster']])(
  'a segments page of 64 shards, bounded and charged (%s)',
  (topology) => {
    // 100 reads a second: a page of 64 shards spends 30.
    const e2e = useApp(topology, {
      startMs: T0,
      env: { READ_RATE_LIMIT_PER_SEC: '100', READ_RATE_LIMIT_BURST: '100' },
    });
    const { clock, http } = e2e;
    const page = async (query: string): Promise<Page> =>
      (await http().get(`/boards/wide/segments?${query}`).expect(200)).body as Page;

    // The tests only read: one board, written once, serves them all (writing 6 400 segment entries
    // over 64 shards is most of this file's time).
    beforeAll(async () => {
      const windows = [{ name: 'h', period: '1h', interval: '1m' }];
      await createBoard(e2e.app(), 'wide', { windows, shards: 64, segments: { max: 10_000 } });
      // In batches of 100: a shard's share of 800 entries of 8 segments passes what one call may weigh.
      for (let at = 0; at < ENTRIES.length; at += 100) {
        await http()
          .post('/boards/wide/increments')
          .send({ items: ENTRIES.slice(at, at + 100) })
          .expect(200);
      }
    });
    // Each test reads past the read budget's window of the one before, well inside the hour.
    beforeEach(() => clock.advanceSec(20));

    it('answers fewer rows than asked with a nextCursor, and the cursors list every segment once', async () => {
      const first = await page('limit=1000');
      expect(first.segments.length).toBeGreaterThan(0);
      expect(first.segments.length).toBeLessThan(SEGMENTS.length);
      expect(first.nextCursor).not.toBeNull();
      const listed = [...first.segments];
      for (let cursor = first.nextCursor; cursor !== null;) {
        clock.advanceSec(1);
        const next = await page(`limit=1000&cursor=${cursor}`);
        listed.push(...next.segments);
        cursor = next.nextCursor;
      }
      expect(listed).toEqual(SEGMENTS.map((name) => ({ name, items: 64 })));
    });

    it('spends 30 reads of the budget a page: the fourth page in a second is a 429', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await http().get('/boards/wide/segments?limit=10')).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    });

    it('refuses an offset past what one page reaches with 422 REQUEST_TOO_COSTLY naming the cursor', async () => {
      const refused = await http().get('/boards/wide/segments?offset=99&limit=1').expect(422);
      expect(refused.body.code).toBe('REQUEST_TOO_COSTLY');
      expect(refused.body.message).toMatch(/cursor/);
      const near = await page('offset=1&limit=2');
      expect(near.segments.map((row) => row.name)).toEqual(SEGMENTS.slice(1, 3));
    });
  },
);
