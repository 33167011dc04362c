import { RequestTooCostlyError } from '../../common/errors';
import type { RedisFunctions } from '../../redis/redis-functions';
import type { RedisService } from '../../redis/redis.service';
import { PreparedBoard } from '../core/board';
import { RankingKeys } from '../core/ranking.keys';
import type { RankingSettings } from '../core/ranking.settings';
import type { WindowConfig } from '../core/window-math';
import type { HistoryStore } from '../history/history.store';
import { ARCHIVE_ROWS_PER_READ } from '../options/calendar/calendar.limits';
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
    { atSec: AT_SEC, rows: Object.entries(rows).map(([item, score]) => ({ item, score })), skipped: 0, ahead: 0, more },
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
  const settings: Partial<RankingSettings> = { expireChunk: 100 };
  const store = new ArchivesStore(
    {} as RedisService,
    functions as RedisFunctions,
    new CalendarFunctions(RANKING),
    settings as RankingSettings,
    {} as HistoryStore,
  );
  return { store, shardRows };
}

const page = (store: ArchivesStore, most: number) =>
  store.archives(board, WINDOW, AT_SEC * 1000, { latestSec: undefined, most: 1, rows: { skip: 0, most } });

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
