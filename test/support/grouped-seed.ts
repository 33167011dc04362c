import type { ChainableCommander, Redis } from 'ioredis';
import { ADMIN } from '../../harness/app';
import type { TestAppWorld } from './app-world';
import { shardTag } from './boards';

/**
 * The groups boards of the reset-prune specs (issue #45), seeded past one client's new-items quota: a
 * few items written through the app, the bulk stored in one pipeline as the app stores it.
 */
const SEP = '\x1f';

/** An hour of minutes and a day of hours; a reset to GROUPED_RESET_WINDOWS remakes the day (`d`). */
export const GROUPED_WINDOWS = [
  { name: 'm', period: '1h', interval: '1m' },
  { name: 'd', period: '1d', interval: '1h' },
];
export const GROUPED_RESET_WINDOWS = [GROUPED_WINDOWS[0], { ...GROUPED_WINDOWS[1], period: '2d' }];

/** Items `first` to `first + count - 1`, stored grouped in `windows` (their top zsets), with data when `data` is given. */
export interface GroupedItems {
  count: number;
  first?: number;
  item: (i: number) => string;
  group: (i: number) => string;
  windows: readonly string[];
  data?: (i: number) => unknown;
}

/** Queues `items` on `batch` as writes store them on the shard of key tag `tag`: groups map and its reverse, windows, data. */
export function storeGrouped(batch: ChainableCommander, tag: string, items: GroupedItems): ChainableCommander {
  const { count, first = 0, item: itemOf, group: groupOf, windows, data } = items;
  for (let i = first; i < first + count; i++) {
    const [item, group] = [itemOf(i), groupOf(i)];
    batch.hset(`${tag}groups`, item, group).zadd(`${tag}bygroup`, 0, `${group}${SEP}${item}`);
    for (const window of windows) batch.zadd(`${tag}${window}:top`, 1, item);
    if (data) batch.hset(`${tag}data`, item, JSON.stringify(data(i)));
  }
  return batch;
}

/** Queues `count` entries of the archived map (z0, z1, … of group `a`) that no listing holds any more. */
export function storeArchived(batch: ChainableCommander, tag: string, count: number): ChainableCommander {
  for (let i = 0; i < count; i++)
    batch.hset(`${tag}grouparch`, `z${i}`, 'a').zadd(`${tag}bygrouparch`, 0, `a${SEP}z${i}`);
  return batch;
}

/** A reset-prune board's bulk: HELD items (h…) in both windows, STALE (s…) only in `d`, ARCHIVED entries. */
export interface PrunableSeed {
  held: number;
  stale: number;
  archived: number;
  group: (i: number, stale: boolean) => string;
  data: (i: number, stale: boolean) => unknown;
}

/**
 * Puts `board` (GROUPED_WINDOWS, groups), writes h0 in g0 through the app, then stores `seed`'s bulk on
 * its shard. Answers the shard's key tag.
 */
export async function seedPrunableBoard(world: TestAppWorld, board: string, seed: PrunableSeed): Promise<string> {
  await world
    .http()
    .put(`/admin/boards/${board}`)
    .set(ADMIN)
    .send({ windows: GROUPED_WINDOWS, groups: true })
    .expect(201);
  await world.http().post(`/boards/${board}/items/h0/increment`).send({ amount: 1, group: 'g0' }).expect(200);
  const tag = await shardTag(world.redis, board);
  const batch = (world.redis.client as Redis).pipeline();
  const part = (prefix: string, count: number, stale: boolean, windows: string[]) =>
    storeGrouped(batch, tag, {
      ...{ count, windows, item: (i) => `${prefix}${i}` },
      ...{ group: (i) => seed.group(i, stale), data: (i) => seed.data(i, stale) },
    });
  part('h', seed.held, false, ['m', 'd']);
  part('s', seed.stale, true, ['d']);
  storeArchived(batch, tag, seed.archived);
  await batch.exec();
  return tag;
}

/** The shard's maps as stored: groups, their reverse, the archived map and its reverse, item data. */
export function groupedMaps(node: Redis, tag: string): Promise<unknown>[] {
  return [
    node.hgetall(`${tag}groups`),
    node.zrange(`${tag}bygroup`, 0, -1),
    node.hgetall(`${tag}grouparch`),
    node.zrange(`${tag}bygrouparch`, 0, -1),
    node.hgetall(`${tag}data`),
  ];
}
