import type { Redis } from 'ioredis';
import { ADMIN } from '../../../harness/app';
import { WRITE_CALL_COMMANDS } from '../../../harness/worst-case/harness';
import { RankingKeys } from '../../../src/ranking/core/ranking.keys';
import { RANKING } from '../../../src/ranking/ranking.functions';
import { RedisFunctions } from '../../../src/redis/redis-functions';
import { RedisService } from '../../../src/redis/redis.service';
import { useTestApp } from '../../support/app-world';
import { GROUPED_RESET_WINDOWS, groupedMaps, type PrunableSeed, seedPrunableBoard } from '../../support/grouped-seed';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../../support/slowlog';

/**
 * A reset of a groups board whose items have data only marks the groups maps and the data for pruning
 * (issue #45); prune steps walk them afterwards, a bounded number of entries a call. Writes landing
 * while the steps walk re-add items the reset let go (with no group, with a new group, with new data)
 * and write items a kept window holds: a write first settles the items it adds, so each board ends
 * exactly as a twin whose reset pruned everything before those writes (a PUT drives its steps to the
 * end). Both boards are seeded alike, the bulk stored as the app stores it (past one client's
 * new-items quota): HELD items in both windows, STALE only in the window the reset remakes, ARCHIVED
 * entries of the archived map no listing holds.
 */
const T0 = Date.UTC(2026, 2, 2, 12);
const HELD = 1500;
const STALE = 1500;
const ARCHIVED = 500;
/** Entries a step walks here: the walk takes dozens of steps, writes landing between them. */
const STEP_ENTRIES = 100;
const ROUNDS = 12;
const SEED: PrunableSeed = {
  ...{ held: HELD, stale: STALE, archived: ARCHIVED },
  group: (i, stale) => `g${i % (stale ? 5 : 7)}`,
  data: (i, stale) => ({ n: stale ? -i : i }),
};

describe('a reset pruned in steps, writes landing between them, ends as an immediate reset (single)', () => {
  const world = useTestApp('single', T0, true);
  const http = () => world.http();
  const node = () => world.redis.client as Redis;
  const tags = new Map<string, string>();

  async function seed(board: string): Promise<void> {
    tags.set(board, await seedPrunableBoard(world, board, SEED));
  }

  beforeAll(async () => {
    await seed('stepped');
    await seed('twin');
  }, 120_000);

  /** The round's writes, alike on both boards: stale items back with no group, with a new one, new data; held items. */
  async function writes(board: string, round: number): Promise<void> {
    const at = (i: number) => round * 40 + i;
    const items = [
      ...Array.from({ length: 10 }, (_, i) => ({ item: `s${at(i)}`, amount: 1000 })),
      ...Array.from({ length: 10 }, (_, i) => ({ item: `s${at(10 + i)}`, amount: 900, group: 'back' })),
      ...Array.from({ length: 10 }, (_, i) => ({ item: `h${at(i)}`, amount: 800 })),
    ];
    await http().post(`/boards/${board}/increments`).send({ items }).expect(200);
    await http()
      .post(`/boards/${board}/items/s${at(20)}/increment`)
      .send({ amount: 700 })
      .expect(200);
    await http()
      .put(`/boards/${board}/items/s${at(10)}/data`)
      .send({ round })
      .expect(204);
  }

  /**
   * What reads show of the board: each window's first 1 000 rows with their group and data, and items
   * the reset let go that no write names (their data still stored until a step reaches it).
   */
  async function shown(board: string): Promise<unknown[]> {
    const answers: unknown[] = [];
    for (const window of ['m', 'd']) {
      const top = await http().get(`/boards/${board}/top?window=${window}&limit=1000&data=true`).expect(200);
      answers.push((top.body as { items: unknown[] }).items);
    }
    const gone = Array.from({ length: 10 }, (_, i) => `s${STALE - 1 - i}`);
    const item = await http().get(`/boards/${board}/items/${gone[0]}?window=d&data=true`).expect(200);
    answers.push({ ...(item.body as object), board: undefined });
    const lookup = await http()
      .post(`/boards/${board}/lookup?data=true`)
      .send({ items: gone, window: 'd' })
      .expect(200);
    answers.push((lookup.body as { items: unknown[] }).items);
    return answers;
  }

  /** The shard's maps (groups, their reverse, the archived map, item data) as stored. */
  async function maps(board: string): Promise<unknown[]> {
    return Promise.all(groupedMaps(node(), tags.get(board)!));
  }

  /** The reset as board_put alone makes it (no prune step after it: an instance stopped right after). */
  async function resetAlone(board: string): Promise<void> {
    const keys = new RankingKeys(world.app.get(RedisService).prefix).board(board);
    const windows = [
      { name: 'm', periodSec: 3600, intervalSec: 60 },
      { name: 'd', periodSec: 172_800, intervalSec: 3600 },
    ];
    const reset = await world.app.get(RedisFunctions).call(RANKING.functions.boardPut, {
      ...{ keys, windows, shards: 1, maxItems: undefined, views: [], groups: true },
      ...{ version: `v-reset-${board}`, reset: true, nowMs: T0 },
    });
    expect(reset.status).toBe('updated');
  }

  it('a repeated PUT ends the prune a stopped one left', async () => {
    await seed('resumed');
    await resetAlone('resumed');
    const tag = tags.get('resumed')!;
    expect(await node().hlen(`${tag}groups`)).toBe(HELD + STALE);
    await http()
      .put('/admin/boards/resumed')
      .set(ADMIN)
      .send({ windows: GROUPED_RESET_WINDOWS, groups: true })
      .expect(200);
    expect(await node().hlen(`${tag}groups`)).toBe(HELD);
    expect(await node().hlen(`${tag}data`)).toBe(HELD);
    expect(await node().hlen(`${tag}grouparch`)).toBe(0);
    expect(await node().hexists(`${tag}cfg`, 'pruning')).toBe(0);
  }, 300_000);

  it('reads and maps equal the twin reset at once, each step within a write call', async () => {
    await http()
      .put('/admin/boards/twin?reset=true')
      .set(ADMIN)
      .send({ windows: GROUPED_RESET_WINDOWS, groups: true })
      .expect(200);
    const functions = world.app.get(RedisFunctions);
    const keys = new RankingKeys(world.app.get(RedisService).prefix).board('stepped');
    await resetAlone('stepped');
    expect(await node().hlen(`${tags.get('stepped')}groups`)).toBe(HELD + STALE);
    let steps = 0;
    let most = 0;
    for (let done = false, round = 0; !done || round < ROUNDS; round++) {
      if (round < ROUNDS) for (const board of ['stepped', 'twin']) await writes(board, round);
      if (round < ROUNDS) expect(await shown('stepped')).toEqual(await shown('twin'));
      await logEveryCommand(node());
      done = await functions.call(RANKING.functions.pruneStep, { keys, entries: STEP_ENTRIES, nowMs: T0 });
      const calls = (await loggedCalls(node())).filter(({ call }) => /^fcall/i.test(call[0]));
      await stopLoggingEveryCommand(node());
      most = Math.max(most, ...calls.map(({ commands }) => commands.length));
      steps++;
    }
    expect(steps).toBeGreaterThan(ROUNDS);
    expect(most).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
    expect(await shown('stepped')).toEqual(await shown('twin'));
    expect(await maps('stepped')).toEqual(await maps('twin'));
    expect(await node().hexists(`${tags.get('stepped')}cfg`, 'pruning')).toBe(0);
  }, 300_000);
});
