import { ADMIN } from '../../../harness/app';
import { ARCHIVE_INDEX_PERIODS_PER_CHANGE } from '../../../src/ranking/core/ranking.limits';
import { TOPOLOGIES } from '../../../harness/redis';
import { useSharedTestApps } from '../../support/app-world';
import { rowsOf, visibleRowsModel } from '../../support/archive-rows';

/**
 * A moderation change updates the kept exception positions of a one-shard board's archived periods
 * itself (issue #49; snapshot_shown_lib's index_change_end), at most ARCHIVE_INDEX_PERIODS_PER_CHANGE
 * of them, newest first: with two more periods kept, the change moves the newest periods' entries to
 * its exceptions and leaves the two oldest as they were, which the next read of each finds again; a
 * group's change moves its items (those of no state of their own) at once. Every period's pages, before
 * and after, must equal the never-moderated twin's rows without the items hidden now, ranks among the
 * rest.
 */
const T0 = Date.UTC(2026, 2, 2, 12);
const DAY_MS = 86_400_000;
const PERIODS = ARCHIVE_INDEX_PERIODS_PER_CHANGE + 2;
const ITEMS = Array.from({ length: 40 }, (_, n) => `i${n}`);
/** Each item's group: g0 … g3 by n mod 4. */
const groupOf = (item: string) => `g${Number(item.slice(1)) % 4}`;
const WINDOWS = [{ name: 'day', calendar: 'day', archive: { keep: PERIODS, top: ITEMS.length } }];
const PAGES = [
  { offset: 0, limit: 5 },
  { offset: 20, limit: 30 },
];

const appFor = useSharedTestApps(T0, { EXPIRE_CHUNK: '100' });

describe.each(TOPOLOGIES)('the archive positions a moderation change updates (%s, one shard)', (topology) => {
  const world = appFor(topology);
  const { clock, http } = world;
  const hidden = new Set<string>();
  const hiddenGroups = new Set<string>();
  // Every state of an item's own is `hidden` here: shown when neither it nor its group is.
  const visible = (item: string) => !hidden.has(item) && !hiddenGroups.has(groupOf(item));
  const name = `ap${topology[0]}`;
  const starts: number[] = [];

  beforeAll(async () => {
    for (const board of [name, `${name}t`])
      await http().put(`/admin/boards/${board}`).set(ADMIN).send({ windows: WINDOWS, groups: true }).expect(201);
    for (let day = 0; day < PERIODS; day++) {
      starts.push((Math.floor(clock.nowMs() / DAY_MS) * DAY_MS) / 1000);
      // Each day its own order: item n scores (n * (day + 3)) mod 41, ties included.
      const items = ITEMS.map((item, n) => ({ item, amount: 1 + ((n * (day + 3)) % 41), group: groupOf(item) }));
      for (const board of [name, `${name}t`])
        await http().post(`/boards/${board}/increments`).send({ items }).expect(200);
      clock.advanceMs(DAY_MS);
    }
    for (const item of ['i3', 'i17']) await hide(item, true);
  });

  it('moves the newest periods to the new exceptions in the change, the rest found again by their reads', async () => {
    await checkEveryPeriod(); // every period's positions found and kept
    const before = await stamps();
    expect(before.size).toBe(PERIODS);

    await hide('i25', true);
    const after = await stamps();
    const moved = starts.filter((at) => after.get(at) !== before.get(at));
    expect(moved).toEqual(starts.slice(-ARCHIVE_INDEX_PERIODS_PER_CHANGE));
    await checkEveryPeriod();

    await hide('i3', false);
    await checkEveryPeriod();

    // A group (g1: i1, i5, …, i37; i17 and i25 hidden on their own): its other items leave at once. A
    // group holds the items some window holds now: the open period's.
    const items = ITEMS.map((item) => ({ item, amount: 1, group: groupOf(item) }));
    await http().post(`/boards/${name}/increments`).send({ items }).expect(200);
    const beforeGroup = await stamps();
    await hideGroup('g1', true);
    const afterGroup = await stamps();
    expect(starts.filter((at) => afterGroup.get(at) !== beforeGroup.get(at))).toEqual(
      starts.slice(-ARCHIVE_INDEX_PERIODS_PER_CHANGE),
    );
    await checkEveryPeriod();
    await hide('i17', false); // back to its group's state: still hidden
    await hideGroup('g1', false);
    await checkEveryPeriod();
  }, 240_000);

  async function hideGroup(group: string, on: boolean): Promise<void> {
    const at = `/admin/boards/${name}/moderation/groups/${group}`;
    if (on) await http().put(at).set(ADMIN).send({ state: 'hidden' }).expect(204);
    else await http().delete(at).set(ADMIN).expect(204);
    if (on) hiddenGroups.add(group);
    else hiddenGroups.delete(group);
  }

  async function hide(item: string, on: boolean): Promise<void> {
    const at = `/admin/boards/${name}/moderation/items/${item}`;
    if (on) await http().put(at).set(ADMIN).send({ state: 'hidden' }).expect(204);
    else await http().delete(at).set(ADMIN).expect(204);
    if (on) hidden.add(item);
    else hidden.delete(item);
  }

  /** Each kept period's entry stamp, by period start. */
  async function stamps(): Promise<Map<number, string>> {
    const [key] = await world.redis.keys(`board:${name}}:day:archshown`);
    const entries = await world.redis.client.hgetall(key);
    return new Map(Object.entries(entries).map(([at, entry]) => [Number(at), entry.split(' ')[0]]));
  }

  async function checkEveryPeriod(): Promise<void> {
    for (const at of starts) {
      const stored = rowsOf((await read(`${name}t`, `at=${at}&limit=${ITEMS.length}`)).items);
      const shown = visibleRowsModel(stored, visible);
      for (const { offset, limit } of PAGES) {
        const answer = await read(name, `at=${at}&offset=${offset}&limit=${limit}`);
        const next = offset + limit < shown.length ? offset + limit : null;
        expect([at, offset, rowsOf(answer.items), answer.nextOffset]).toEqual([
          at,
          offset,
          shown.slice(offset, offset + limit),
          next,
        ]);
      }
    }
  }

  /** An archive read sent again while a closed period is still being archived (503 WINDOW_DRAINING). */
  async function read(board: string, query: string): Promise<Record<string, unknown>> {
    for (let attempt = 0; ; attempt++) {
      const { status, body } = await http().get(`/boards/${board}/archive?window=day&${query}`);
      if (status === 200) return body;
      if (status !== 503 || attempt >= 40) throw new Error(`${board} archive?${query} answered ${status}`);
    }
  }
});
