import { ADMIN } from '../../harness/app';
import { TestHttp } from '../../harness/test-http';
import type { CostedBoard } from '../../src/ranking/core/write-cost';

/** The windows of the ranking e2e files' boards unless a test gives others: an hour of 5-minute slots, a day of hours. */
export const HOUR_AND_DAY = {
  windows: [
    { period: '1h', interval: '5m' },
    { name: 'day', period: '24h', interval: '1h' },
  ],
};

/** Puts boards through `http` as an admin; the test reads the answer (201, 200, 409, ...). */
export function boardPutter(http: () => TestHttp) {
  return (name = 'posts', body: object = HOUR_AND_DAY) => http().put(`/admin/boards/${name}`).set(ADMIN).send(body);
}

/** The key tag ("{…}:") of board `board`'s first shard on `redis` (a TestRedis's keys), from its config key. */
export async function shardTag(redis: { keys(pattern: string): Promise<string[]> }, board: string): Promise<string> {
  const [cfg] = await redis.keys(`board:${board}}:cfg`);
  return cfg.slice(cfg.indexOf('{'), -'cfg'.length);
}

/**
 * The costliest segmented board's shape (issue #45): 4 windows, a unique view, `ties: first`, capped actors and
 * segments, so a batch of entries with a new actor each goes in several calls of bounded work (write-cost.ts).
 */
export const SEGMENTED_SPLIT_BOARD = {
  windows: Array.from({ length: 4 }, (_, w) => ({ name: `w${w}`, period: `${w + 1}h`, interval: '1m' })),
  views: [{ name: 'people', mode: 'unique', window: 'w0' }],
  ties: 'first' as const,
  actors: { capPerItem: 1000 },
  segments: { max: 10_000 },
};

/** SEGMENTED_SPLIT_BOARD as the write cost weighs it. */
export const SEGMENTED_SPLIT_COSTED: CostedBoard = {
  ...SEGMENTED_SPLIT_BOARD,
  segmentsMax: 10_000,
  actors: true,
  capPerItem: 1000,
};
