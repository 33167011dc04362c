import fc from 'fast-check';
import { useRankingService } from '../../harness/ranking';
import { moveClock, rankingOps } from '../support/ranking-ops';
import { TOPOLOGIES } from '../../harness/redis';
import { shardOf } from '../../src/ranking/core/shard-math';

const WINDOWS = [
  { name: 'short', period: 30, interval: 10 },
  { name: 'long', period: 120, interval: 40 },
];
// Enough ids that every shard holds some, with ties, negative sums and multi-byte ids among them.
const ITEMS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'é', 'a b/c', 'zz', 'Z'];
const USERS = ['u1', 'u2'];

const op = rankingOps({ items: ITEMS, users: USERS, maxAdvanceMs: 60_000, boundaries: [10, 40], maxBatch: 8 });

/**
 * The same random operations go into an unsharded board and a sharded one; every read (and every
 * write's answer) must agree, including ranks, ties, pages and neighbours, before and after expiry.
 */
describe.each(TOPOLOGIES)('sharded boards answer exactly as unsharded ones (property, %s)', (topology) => {
  // A tiny chunk, so expiry of a slot often takes several calls.
  const setup = useRankingService(topology, { EXPIRE_CHUNK: '2' });
  const { clock } = setup;
  let run = 0;

  it('top pages, item standings, neighbours and write answers agree after every step', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 }),
        fc.constantFrom(2, 3, 5),
        fc.array(op, { minLength: 1, maxLength: 20 }),
        async (startMs, shards, ops) => {
          run++;
          const plain = `u${run}`;
          const sharded = `s${run}`;
          clock.setMs(startMs);
          await setup.ranking.putBoard({ name: plain, windows: WINDOWS });
          await setup.ranking.putBoard({ name: sharded, windows: WINDOWS, shards });
          for (const step of ops) {
            switch (step.kind) {
              case 'inc': {
                const [a, b] = [
                  await setup.ranking.increment(plain, step.item, step.amount),
                  await setup.ranking.increment(sharded, step.item, step.amount),
                ];
                expect(b.body.windows).toEqual(a.body.windows);
                break;
              }
              case 'batch': {
                const [a, b] = [
                  await setup.ranking.incrementBatch(plain, step.entries),
                  await setup.ranking.incrementBatch(sharded, step.entries),
                ];
                expect(b.body.count).toBe(a.body.count);
                break;
              }
              case 'like':
              case 'unlike': {
                const undo = step.kind === 'unlike';
                const [a, b] = [
                  await setup.ranking.like(plain, step.item, step.user, undo),
                  await setup.ranking.like(sharded, step.item, step.user, undo),
                ];
                expect({ counted: b.body.counted, windows: b.body.windows }).toEqual({
                  counted: a.body.counted,
                  windows: a.body.windows,
                });
                break;
              }
              default:
                moveClock(clock, step);
            }
            await compare(plain, sharded);
          }
          await setup.ranking.deleteBoard(plain);
          await setup.ranking.deleteBoard(sharded);
        },
      ),
      { numRuns: 10 },
    );
    // 21 s (single node) and over 60 s (Cluster) measured on a busy 2-core machine; past Jest's timeout the
    // run goes on moving the shared clock under the next test, which then fails too.
  }, 180_000);

  it('deep top pages agree when the top items crowd onto a few shards (several read rounds)', async () => {
    // Ids hashed onto shard 0 and 1 of 8 take most of the high scores, so those shards are read again.
    const crowded = Array.from({ length: 4000 }, (_, i) => `c${i}`).filter((id) => shardOf(id, 8) < 2);
    const spread = Array.from({ length: 160 }, (_, i) => `s${i}`);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 160, maxLength: 160 }),
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 160, maxLength: 160 }),
        async (highScores, lowScores) => {
          run++;
          const [plain, sharded] = [`du${run}`, `ds${run}`];
          clock.setMs(1_700_000_000_000);
          await setup.ranking.putBoard({ name: plain, windows: WINDOWS });
          await setup.ranking.putBoard({ name: sharded, windows: WINDOWS, shards: 8 });
          const entries = [
            ...highScores.map((amount, i) => ({ item: crowded[i], amount: amount + 8 })),
            ...lowScores.map((amount, i) => ({ item: spread[i], amount })),
          ];
          await setup.ranking.incrementBatch(plain, entries);
          await setup.ranking.incrementBatch(sharded, entries);
          for (const [offset, limit] of [
            [0, 1000],
            [0, 40],
            [37, 50],
            [150, 100],
            [300, 30],
          ]) {
            expect((await setup.ranking.top(sharded, 'short', offset, limit)).items).toEqual(
              (await setup.ranking.top(plain, 'short', offset, limit)).items,
            );
          }
          await setup.ranking.deleteBoard(plain);
          await setup.ranking.deleteBoard(sharded);
        },
      ),
      { numRuns: 5 },
    );
  });

  async function settled(board: string, window: string) {
    let top = await setup.ranking.top(board, window, 0, 1000);
    for (let i = 0; top.draining && i < 50; i++) top = await setup.ranking.top(board, window, 0, 1000);
    expect(top.draining).toBe(false);
    return top.items;
  }

  async function compare(plain: string, sharded: string): Promise<void> {
    for (const w of WINDOWS) {
      expect(await settled(sharded, w.name)).toEqual(await settled(plain, w.name));
      for (const [offset, limit] of [
        [0, 3],
        [4, 5],
      ]) {
        expect((await setup.ranking.top(sharded, w.name, offset, limit)).items).toEqual(
          (await setup.ranking.top(plain, w.name, offset, limit)).items,
        );
      }
      for (const id of ITEMS) {
        const [a, b] = [await setup.ranking.item(plain, w.name, id), await setup.ranking.item(sharded, w.name, id)];
        expect({ score: b.score, rank: b.rank, percentile: b.percentile }).toEqual({
          score: a.score,
          rank: a.rank,
          percentile: a.percentile,
        });
        expect((await setup.ranking.around(sharded, w.name, id, 2)).items).toEqual(
          (await setup.ranking.around(plain, w.name, id, 2)).items,
        );
      }
    }
  }
});
