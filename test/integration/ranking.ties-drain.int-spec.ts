import { ADMIN } from '../../harness/app';
import { useTestApp } from '../support/app-world';
import { shardOf } from '../../src/ranking/core/shard-math';

/**
 * Issue #49: on a `ties: first` board the items an expiry brings to equal scores reached them at once
 * (when their slot left the window). The app here drains 3 fields a call (EXPIRE_CHUNK), so a slot of
 * many items drains in several calls, each taking fields at random: their order must not depend on
 * that. The drain of one slot gives them one mark, so they list in descending byte order of id (as
 * shared ties do), the same on a moderated board once every item is allowed as on one never moderated;
 * an item written while the slot drains reached its score later and lists after them.
 */
const T0 = 1_700_002_800_000;
const MINUTE_MS = 60_000;
const ITEMS = ['a', 'b', 'c', 'd', 'e', 'é', 'f', 'g', 'h', 'x y'];
const descending = (items: string[]) => [...items].sort((x, y) => Buffer.compare(Buffer.from(y), Buffer.from(x)));

describe('ties: first, the order an expiry drained in several calls makes (single)', () => {
  const world = useTestApp('single', T0);
  const { clock, http } = world;
  const windows = [{ name: 'w', period: '3m', interval: '1m' }];
  let board = 0;

  async function write(boards: string[], items: Array<{ item: string; amount: number }>): Promise<void> {
    for (const b of boards) await http().post(`/boards/${b}/increments`).send({ items }).expect(200);
  }

  /** Reads each board until its expired slots are drained (503 WINDOW_DRAINING while some are left). */
  async function drained(boards: string[]): Promise<void> {
    for (const b of boards)
      for (let attempt = 0; ; attempt++) {
        const { status } = await http().get(`/boards/${b}/top?window=w&limit=1`);
        if (status === 200) break;
        if (status !== 503 || attempt >= 20) throw new Error(`/boards/${b}/top answered ${status}`);
      }
  }

  const top = async (b: string) =>
    ((await http().get(`/boards/${b}/top?window=w&limit=20`).expect(200)).body.items as Array<{ item: string }>).map(
      (row) => row.item,
    );

  /** Every item at 5 then 2 by the drain of the first minute's slot: the slot holds more than a call drains. */
  async function tiedByDrain(boards: string[]): Promise<void> {
    await write(
      boards,
      ITEMS.map((item) => ({ item, amount: 3 })),
    );
    clock.advanceMs(2 * MINUTE_MS);
    await write(
      boards,
      [...ITEMS].reverse().map((item) => ({ item, amount: 2 })),
    );
    clock.advanceMs(MINUTE_MS);
  }

  it.each([1, 3])('lists the equal scores one drain makes by id, on %i shard(s)', async (shards) => {
    const name = `d${shards}n${board++}`;
    await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, shards, ties: 'first' }).expect(201);
    await tiedByDrain([name]);
    await drained([name]);
    const listed = await top(name);
    expect([...listed].sort()).toEqual([...ITEMS].sort());
    // Each shard's own items by id (shards order one another by their marks' time and sequence).
    for (let shard = 0; shard < shards; shard++) {
      const own = listed.filter((item) => shardOf(item, shards) === shard);
      expect(own).toEqual(descending(own));
    }
    await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
  });

  it('a write landing while the slot drains lists after the items the drain brought to its score', async () => {
    const name = `w${board++}`;
    await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, shards: 1, ties: 'first' }).expect(201);
    await tiedByDrain([name]);
    // Its call drains one chunk first: most of the slot drains after it.
    await write([name], [{ item: 'z', amount: 2 }]);
    await drained([name]);
    expect(await top(name)).toEqual([...descending(ITEMS), 'z']);
    await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
  });

  it('a review board allowing every item lists as its never-moderated twin (the issue #49 example)', async () => {
    const [name, twin] = [`r${board}`, `r${board++}t`];
    for (const [b, moderation] of [
      [name, { review: true }],
      [twin, undefined],
    ] as const)
      await http().put(`/admin/boards/${b}`).set(ADMIN).send({ windows, ties: 'first', moderation }).expect(201);
    const moderate = (item: string, state: string) =>
      http()
        .put(`/admin/boards/${name}/moderation/items/${encodeURIComponent(item)}`)
        .set(ADMIN)
        .send({ state });
    await write(
      [name, twin],
      ['a', 'b', 'c', 'd', 'e', 'é', 'x y'].map((item, i) => ({ item, amount: [3, 3, 5, 1, 2, 5, 4][i] })),
    );
    await moderate('a', 'hidden').expect(204);
    for (const item of ['c', 'e']) await moderate(item, 'allowed').expect(204);
    clock.advanceMs(2 * MINUTE_MS);
    await drained([name, twin]);
    await write(
      [name, twin],
      [
        { item: 'a', amount: 1 },
        { item: 'a', amount: 1 },
        { item: 'e', amount: 2 },
      ],
    );
    clock.advanceMs(MINUTE_MS);
    await drained([name, twin]);
    for (const item of ['a', 'b', 'd', 'é', 'x y']) await moderate(item, 'allowed').expect(204);
    expect(await top(name)).toEqual(['e', 'a']);
    expect(await top(twin)).toEqual(['e', 'a']);
    for (const b of [name, twin]) await http().delete(`/admin/boards/${b}`).set(ADMIN).expect(204);
  });
});
