import { ADMIN } from '../../harness/app';
import { TestHttp } from '../../harness/test-http';

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
