import fc from 'fast-check';
import { ADMIN } from '../../harness/app';
import { TOPOLOGIES } from '../../harness/redis';
import type { Redis } from 'ioredis';
import { useTestApp } from '../support/app-world';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../support/slowlog';
import { COUNT_SHARD_WEIGHT, LOOKUP_COUNTS_PER_CALL, LOOKUP_IDS_PER_CALL } from '../../src/ranking/core/ranking.limits';

/**
 * POST /boards/:board/lookup on sharded boards against a brute force: board ranks (competition),
 * ranks among the ids, scores and data, after random increments (negative and zero sums included) and
 * clock moves that expire slots. On one Redis the whole lookup is one function call (lookup_node);
 * on a Cluster, or while a shard drains, the two rounds answer, and must answer the same.
 */
const T0 = 1_700_002_800_000;
// More ids than a call answers (LOOKUP_IDS_PER_CALL), on a shard of 3 too: a lookup may take several calls a shard.
const POOL = Array.from({ length: Math.ceil(3.3 * LOOKUP_IDS_PER_CALL) }, (_, i) => `p${i}`);
const MINUTE_MS = 60_000;

const step = fc.oneof(
  fc.record({
    kind: fc.constant('batch' as const),
    entries: fc.array(
      fc.record({ item: fc.constantFrom(...POOL), amount: fc.integer({ min: -3, max: 9 }).filter((n) => n !== 0) }),
      { minLength: 1, maxLength: 12 },
    ),
  }),
  fc.record({ kind: fc.constant('move' as const), minutes: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ kind: fc.constant('data' as const), item: fc.constantFrom(...POOL) }),
);

describe.each(TOPOLOGIES)('lookups of sharded boards against a brute force (property, %s)', (topology) => {
  const world = useTestApp(topology, T0);
  const { clock, http } = world;
  let board = 0;
  let ranked = 0;

  it.each([3, 8])(
    '%i shards: every lookup answers the brute force',
    async (shards) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(step, { minLength: 1, maxLength: 12 }),
          fc.shuffledSubarray([...POOL, 'nobody'], { minLength: 1 }),
          async (steps, asked) => {
            const name = `lk${board++}`;
            await http()
              .put(`/admin/boards/${name}`)
              .set(ADMIN)
              .send({ windows: [{ name: 'w', period: '3m', interval: '1m' }], shards })
              .expect(201);
            // Each event, with the minute it landed in: a 3-minute window holds the current minute and the two before.
            const events: Array<{ item: string; amount: number; minute: number }> = [];
            const data = new Map<string, object>();
            for (const s of steps) {
              const minute = Math.floor(clock.nowMs() / MINUTE_MS);
              if (s.kind === 'move') clock.advanceMs(s.minutes * MINUTE_MS);
              if (s.kind === 'batch') {
                await http().post(`/boards/${name}/increments`).send({ items: s.entries }).expect(200);
                events.push(...s.entries.map((e) => ({ ...e, minute })));
              }
              if (s.kind === 'data') {
                // Refused (404) for an item no window holds: data never outlives its item.
                const put = await http().put(`/boards/${name}/items/${s.item}/data`).send({ n: s.item, minute });
                expect([204, 404]).toContain(put.status);
                if (put.status === 204) data.set(s.item, { n: s.item, minute });
              }
            }
            const now = Math.floor(clock.nowMs() / MINUTE_MS);
            const scores = new Map<string, number>();
            for (const e of events.filter((e) => e.minute > now - 3))
              scores.set(e.item, (scores.get(e.item) ?? 0) + e.amount);
            const scoreOf = (item: string) => Math.max(scores.get(item) ?? 0, 0) || 0;
            const positive = [...scores.values()].filter((score) => score > 0);
            const boardRank = (item: string) => {
              const score = scoreOf(item);
              return score > 0 ? 1 + positive.filter((other) => other > score).length : null;
            };

            const { body } = await http()
              .post(`/boards/${name}/lookup?data=true`)
              .send({ items: asked, window: 'w' })
              .expect(200);
            expect(
              body.items.map((row: { item: string; score: number }) => [row.item, Math.max(row.score, 0)]),
            ).toEqual(asked.map((item) => [item, scoreOf(item)]));
            expect(body.items.map((row: { rank: number | null }) => row.rank)).toEqual(asked.map(boardRank));
            // An item's data is the last stored for it, or none (it goes once no window holds the item).
            for (const row of body.items as Array<{ item: string; data: object | null }>) {
              if (row.data !== null) expect(row.data).toEqual(data.get(row.item));
            }
            ranked += asked.filter((item) => boardRank(item) !== null).length;

            const relative = await http()
              .post(`/boards/${name}/lookup`)
              .send({ items: asked, window: 'w', relative: true })
              .expect(200);
            const among = asked.map(scoreOf).filter((score) => score > 0);
            expect(relative.body.items.map((row: { rank: number | null }) => row.rank)).toEqual(
              asked.map((item) => (scoreOf(item) > 0 ? 1 + among.filter((s) => s > scoreOf(item)).length : null)),
            );
            await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
          },
        ),
        {
          numRuns: topology === 'single' ? 40 : 25,
          // Always among the runs: twelve items scored and asked for, so the check below holds on its own.
          examples: [
            [[{ kind: 'batch' as const, entries: POOL.slice(0, 12).map((item) => ({ item, amount: 1 })) }], POOL],
          ],
        },
      );
      expect(ranked).toBeGreaterThan(10); // not vacuous
      // Over 14 s measured on a busy 2-core machine, where a 21 s test also ran past 60 s: room to spare.
    },
    180_000,
  );

  it('on one Redis, a lookup of a sharded board is one round: LOOKUP_IDS_PER_CALL ids, LOOKUP_COUNTS_PER_CALL counts (ids x shards) a call at most', async () => {
    if (topology !== 'single') return;
    await http()
      .put('/admin/boards/one')
      .set(ADMIN)
      .send({ windows: [{ name: 'w', period: '1h', interval: '1m' }], shards: 8 })
      .expect(201);
    const ids = Array.from({ length: 300 }, (_, i) => `one-${i}`);
    await http()
      .post('/boards/one/increments')
      .send({ items: ids.map((item, i) => ({ item, amount: i + 1 })) })
      .expect(200);
    // 8 shards: a call takes (LOOKUP_COUNTS_PER_CALL less the shards' own reads) / 8 ids, LOOKUP_IDS_PER_CALL at most.
    const idsPerCall = Math.min(LOOKUP_IDS_PER_CALL, Math.floor((LOOKUP_COUNTS_PER_CALL - 8 * COUNT_SHARD_WEIGHT) / 8));
    for (const [asked, calls] of [
      [ids.slice(0, 24), 1],
      [ids, Math.ceil(ids.length / idsPerCall)],
    ] as const) {
      const node = world.redis.client as Redis;
      await logEveryCommand(node);
      const { body } = await http().post('/boards/one/lookup').send({ items: asked, window: 'w' }).expect(200);
      expect(body.items.map((row: { rank: number }) => row.rank)).toEqual(asked.map((_, i) => ids.length - i));
      const logged = await loggedCalls(node);
      await stopLoggingEveryCommand(node);
      // The lookup's and the counts' calls only: on a slow machine the app's scheduler may run a pass meanwhile.
      const reads = logged
        .map(({ call: [command, name] }) => [command.toLowerCase(), String(name).replace(/^tb_ranking_[0-9a-f]+_/, '')])
        .filter(([command, name]) => /^(fcall|eval)/.test(command) && /lookup|count/.test(name));
      expect(reads).toEqual(Array.from({ length: calls }, () => ['fcall_ro', 'lookup_node']));
    }
  });
});
