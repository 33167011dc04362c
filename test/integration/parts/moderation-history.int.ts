import { ADMIN } from '../../../harness/app';
import { useTestApp } from '../../support/app-world';

/**
 * Moderation in a window's history (issue #49): `GET /boards/:board/history` lists what top lists, so
 * a hidden item (on a review board, any item not allowed) is left out of every kept snapshot and the
 * ranks close the gap it leaves; allowing it again answers the snapshot as if it had never been hidden.
 */
const T0 = 1_700_002_800_000;
const MINUTE_MS = 60_000;
const SCORES: Record<string, number> = { a: 5, b: 4, 'x y': 4, c: 3, d: 1 };

describe('moderation in history (single)', () => {
  const world = useTestApp('single', T0);
  const { clock, http } = world;
  const windows = [{ name: 'w', period: '3m', interval: '1m', snapshots: { keep: 3, top: 10 } }];
  let board = 0;

  const moderate = (name: string, item: string, state: 'hidden' | 'allowed' | null) => {
    const at = http()
      .put(`/admin/boards/${name}/moderation/items/${encodeURIComponent(item)}`)
      .set(ADMIN);
    return state === null
      ? http()
          .delete(`/admin/boards/${name}/moderation/items/${encodeURIComponent(item)}`)
          .set(ADMIN)
          .expect(204)
      : at.send({ state }).expect(204);
  };
  const history = async (name: string) =>
    (
      (await http().get(`/boards/${name}/history?window=w`).expect(200)).body.items as Array<Record<string, unknown>>
    ).map(({ rank, item, score }) => [rank, item, score]);

  /** A board (and its never-moderated twin) whose latest snapshot holds SCORES. */
  async function snapshotted(shards: number, review: boolean): Promise<[string, string]> {
    const [name, twin] = [`h${shards}${review ? 'r' : 'h'}${board}`, `h${shards}${review ? 'r' : 'h'}${board++}t`];
    for (const [b, moderation] of [
      [name, { review }],
      [twin, undefined],
    ] as const)
      await http().put(`/admin/boards/${b}`).set(ADMIN).send({ windows, shards, moderation }).expect(201);
    const items = Object.entries(SCORES).map(([item, amount]) => ({ item, amount }));
    for (const b of [name, twin]) await http().post(`/boards/${b}/increments`).send({ items }).expect(200);
    clock.advanceMs(MINUTE_MS);
    for (const b of [name, twin]) await http().get(`/boards/${b}/top?window=w`).expect(200);
    return [name, twin];
  }

  it.each([1, 3])('leaves hidden items out of a snapshot, ranks closing the gap, on %i shard(s)', async (shards) => {
    const [name, twin] = await snapshotted(shards, false);
    const full = await history(twin);
    expect(full).toEqual([
      [1, 'a', 5],
      [2, 'x y', 4],
      [2, 'b', 4],
      [4, 'c', 3],
      [5, 'd', 1],
    ]);
    await moderate(name, 'x y', 'hidden');
    await moderate(name, 'a', 'hidden');
    expect(await history(name)).toEqual([
      [1, 'b', 4],
      [2, 'c', 3],
      [3, 'd', 1],
    ]);
    await moderate(name, 'a', 'allowed');
    await moderate(name, 'x y', null);
    expect(await history(name)).toEqual(full);
  });

  it.each([1, 3])('a review board lists the allowed items of a snapshot only, on %i shard(s)', async (shards) => {
    const [name, twin] = await snapshotted(shards, true);
    expect(await history(name)).toEqual([]);
    for (const item of ['c', 'x y']) await moderate(name, item, 'allowed');
    expect(await history(name)).toEqual([
      [1, 'x y', 4],
      [2, 'c', 3],
    ]);
    for (const item of ['a', 'b', 'd']) await moderate(name, item, 'allowed');
    expect(await history(name)).toEqual(await history(twin));
  });
});

/**
 * An item's history where the board's few moderated items are found in a snapshot by id (the rows
 * ahead outnumber them many times over): the lowest of 80 items ranks among the rows shown now.
 */
describe('moderation in an item history of a long snapshot (single)', () => {
  const world = useTestApp('single', T0);
  const { clock, http } = world;
  const windows = [{ name: 'w', period: '3m', interval: '1m', snapshots: { keep: 3, top: 100 } }];
  const items = Array.from({ length: 80 }, (_, i) => ({ item: `i${String(i).padStart(2, '0')}`, amount: 100 - i }));
  const put = (name: string, item: string, state: string) =>
    http().put(`/admin/boards/${name}/moderation/items/${item}`).set(ADMIN).send({ state }).expect(204);
  const ranks = async (name: string, item: string) =>
    (
      (await http().get(`/boards/${name}/items/${item}/history?window=w`).expect(200)).body.points as Array<{
        rank: number | null;
      }>
    ).map((point) => point.rank);

  it.each([
    [1, false],
    [3, false],
    [1, true],
    [3, true],
  ])('on %i shard(s), review %s', async (shards, review) => {
    const name = `long${shards}${review ? 'r' : 'h'}`;
    await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, shards, moderation: { review } }).expect(201);
    await http().post(`/boards/${name}/increments`).send({ items }).expect(200);
    clock.advanceMs(MINUTE_MS);
    await http().get(`/boards/${name}/top?window=w`).expect(200);
    expect(await ranks(name, 'i79')).toEqual([review ? null : 80]);
    if (review) for (const item of ['i03', 'i50', 'i79']) await put(name, item, 'allowed');
    else for (const item of ['i03', 'i50', 'i78']) await put(name, item, 'hidden');
    expect(await ranks(name, 'i79')).toEqual([review ? 3 : 77]);
    expect(await ranks(name, 'i51')).toEqual([review ? null : 50]);
  });
});
