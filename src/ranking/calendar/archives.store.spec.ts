import { RequestTooCostlyError } from '../../common/errors';
import type { RedisFunctions } from '../../redis/redis-functions';
import type { RedisService } from '../../redis/redis.service';
import { PreparedBoard } from '../core/board';
import { RankingKeys } from '../core/ranking.keys';
import type { RankingSettings } from '../core/ranking.settings';
import type { WindowConfig } from '../core/window-math';
import type { HistoryStore } from '../history/history.store';
import { ARCHIVE_ROWS_PER_CALL, ARCHIVE_ROWS_PER_READ } from '../options/calendar/calendar.limits';
import { RANKING } from '../ranking.functions';
import { ArchivesStore } from './archives.store';
import { type ArchiveReadReply, CalendarFunctions } from './calendar.functions';

/**
 * A moderated sharded board's archive page (issue #49 with #45's bounds): each shard answers its rows
 * from the top, hidden ones too, at most its share of ARCHIVE_ROWS_PER_READ; one stopped there first
 * (`more`) leaves rows nobody read after its last. The page is answered only from the merged rows
 * known to rank ahead of them, else refused: never a page missing a row that shard holds.
 */
const AT_SEC = 1_700_000_000;
const WINDOW: WindowConfig = {
  name: 'day',
  periodSec: 86_400,
  intervalSec: 86_400,
  createdAtMs: 0,
  snapshots: { keep: 3, top: 100 },
};
const board = new PreparedBoard(
  { name: 'b', version: 'v', views: [], shards: 2, maxItems: null, windows: [WINDOW] },
  (shard) => new RankingKeys('tb:').board('b', shard),
);

/**
 * One shard's reply: its rows of the period (item: score, in their order), whether it stopped at its
 * share, the items left out.
 */
const reply = (rows: Record<string, number>, more: boolean, leftOut: string[]): ArchiveReadReply => ({
  keeps: true,
  draining: false,
  indexing: false,
  kept: [AT_SEC],
  archives: [
    {
      atSec: AT_SEC,
      rows: Object.entries(rows).map(([item, score]) => ({ item, score })),
      skipped: 0,
      ahead: 0,
      more,
      seam: '',
    },
  ],
  leftOut,
});

/** The store over two shards answering `replies`, and the calls it made (their shard rows each). */
function storeAnswering(replies: ArchiveReadReply[]) {
  const shardRows: number[] = [];
  const functions: Partial<RedisFunctions> = {
    define: () => undefined,
    call: <In, Out>(_fn: unknown, input: In): Promise<Out> => {
      shardRows.push((input as { shardRows: number }).shardRows);
      return Promise.resolve(replies[(shardRows.length - 1) % replies.length] as Out);
    },
  };
  const store = storeOver(functions);
  return { store, shardRows };
}

const page = (store: ArchivesStore, most: number) =>
  store.archives(board, WINDOW, AT_SEC * 1000, { latestSec: undefined, most: 1, rows: { skip: 0, most } });

/** The store over `functions` (the only dependency its page reads call). */
function storeOver(functions: Partial<RedisFunctions>): ArchivesStore {
  const settings: Partial<RankingSettings> = { expireChunk: 100 };
  return new ArchivesStore(
    {} as RedisService,
    functions as RedisFunctions,
    new CalendarFunctions(RANKING),
    settings as RankingSettings,
    {} as HistoryStore,
  );
}

describe('a moderated sharded archive page, each shard within its share of the rows', () => {
  it('asks each shard for at most its share of ARCHIVE_ROWS_PER_READ', async () => {
    const { store, shardRows } = storeAnswering([reply({ a1: 10 }, false, []), reply({ b1: 8 }, false, [])]);
    await page(store, 2);
    expect(shardRows).toEqual([ARCHIVE_ROWS_PER_READ / 2, ARCHIVE_ROWS_PER_READ / 2]);
  });

  it('answers from the rows ranking ahead of a stopped shard last row when they hold the page', async () => {
    const { store } = storeAnswering([
      reply({ a1: 10, a2: 9, a3: 3 }, true, ['a2']),
      reply({ b1: 8, b2: 7 }, false, []),
    ]);
    const { archives } = await page(store, 2);
    expect(archives[0].rows.map((row) => row.item)).toEqual(['a1', 'b1']);
    expect(archives[0].more).toBe(true);
  });

  it('refuses a page that needs rows past a stopped shard last row (it may hold one ranking ahead)', async () => {
    const { store } = storeAnswering([
      reply({ a1: 10, a2: 9, a3: 8 }, true, ['a2', 'a3']),
      reply({ b1: 7, b2: 5 }, false, []),
    ]);
    await expect(page(store, 2)).rejects.toThrow(RequestTooCostlyError);
  });
});

/**
 * A one-shard read of more rows than ARCHIVE_ROWS_PER_CALL (an archives page of 2 periods of 10 000
 * rows) goes in calls of at most that many rows of one period each, joined as one call's pages, each
 * call past the first charged.
 */
describe('a one-shard archives page of long periods, in calls of ARCHIVE_ROWS_PER_CALL rows', () => {
  const ROWS = 10_000;
  const STARTS = [AT_SEC - 2 * 86_400, AT_SEC - 86_400, AT_SEC];
  const one = new PreparedBoard(
    { name: 'o', version: 'v', views: [], shards: 1, maxItems: null, windows: [WINDOW] },
    (shard) => new RankingKeys('tb:').board('o', shard),
  );
  type Asked = { latestSec?: number; most: number; rows: { skip: number; most: number } };

  it('asks at most ARCHIVE_ROWS_PER_CALL rows of one period a call and joins the pages', async () => {
    const asked: Asked[] = [];
    const functions: Partial<RedisFunctions> = {
      define: () => undefined,
      call: <In, Out>(_fn: unknown, input: In): Promise<Out> => {
        const { latestSec, most, rows } = input as Asked;
        asked.push({ latestSec, most, rows });
        const atSec = Math.max(...STARTS.filter((start) => latestSec === undefined || start <= latestSec));
        const last = Math.min(rows.skip + rows.most, ROWS);
        const page = Array.from({ length: last - rows.skip }, (_, k) => ({
          item: `${atSec}:${rows.skip + k}`,
          score: 1,
        }));
        const archive = { atSec, rows: page, skipped: rows.skip, ahead: 0, more: last < ROWS, seam: '' };
        const answer: ArchiveReadReply = { ...reply({}, false, []), kept: STARTS, archives: [archive], leftOut: null };
        return Promise.resolve(answer as Out);
      },
    };
    const store = storeOver(functions);
    let charged = 0;
    const ask = { latestSec: undefined, most: 2, rows: { skip: 0, most: ROWS }, admit: (n: number) => (charged += n) };
    const { archives } = await store.archives(one, WINDOW, AT_SEC * 1000, ask);
    expect(Math.max(...asked.map(({ rows }) => rows.most))).toBeLessThanOrEqual(ARCHIVE_ROWS_PER_CALL);
    expect(asked.every(({ most }) => most === 1)).toBe(true);
    expect(charged).toBe(asked.length - 1);
    expect(archives.map((archive) => archive.atSec)).toEqual([AT_SEC, AT_SEC - 86_400]);
    for (const archive of archives) {
      expect(archive.rows.map((row) => row.item)).toEqual(
        Array.from({ length: ROWS }, (_, n) => `${archive.atSec}:${n}`),
      );
      expect([archive.skipped, archive.more]).toEqual([0, false]);
    }
  });
});
