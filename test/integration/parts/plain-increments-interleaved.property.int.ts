import fc from 'fast-check';
import { TOPOLOGIES } from '../../../harness/redis';
import { PreparedBoard } from '../../../src/ranking/core/board';
import { incrementTwins } from '../../support/increment-twins';
import { useRankingFunctions } from '../../support/ranking-functions';

const T0 = 1_700_000_000_000;
const WINDOWS = [
  { name: 'min', periodSec: 60, intervalSec: 10 },
  { name: 'hour', periodSec: 3600, intervalSec: 600 },
];

/**
 * The ranking library keeps its Lua state from call to call, and several boards share one Redis: what
 * one call on one board leaves behind (its config copy, what its options enable, caches) must not change
 * what the next call on another board answers or writes. Pairs of twin boards, their calls interleaved
 * in one Redis (one server, or a Cluster's nodes), each pair moderated alike (states set and cleared on both twins): one twin takes a
 * second's requests in one call (the plain path once its slots are known), the other one call each
 * (the general path), and both must answer and hold exactly the same, whatever ran on the other pairs.
 */
describe.each(TOPOLOGIES)(
  'plain increments on boards whose calls interleave match the general path (%s)',
  (topology) => {
    const setup = useRankingFunctions(topology);
    const { answersOf, moderate, contents } = incrementTwins(setup);

    it('property: answers and every key of each pair match, moderated pairs among plain ones', async () => {
      const request = fc.record({
        item: fc.constantFrom('a', 'b', 'c'),
        amount: fc.integer({ min: -2, max: 4 }).filter((n) => n !== 0),
        newItems: fc.constantFrom(1, 1, -1, 0),
        msInSecond: fc.constantFrom(0, 500, 999),
      });
      const step = fc.record({
        pair: fc.nat({ max: 2 }),
        afterMs: fc.constantFrom(0, 0, 4_000, 11_000, 70_000),
        // A state set on both twins of the pair before its requests (null: none set in this step).
        moderation: fc.option(
          fc.record({ item: fc.constantFrom('a', 'b', 'c'), state: fc.constantFrom('hidden', 'allowed', null) }),
          { freq: 3 },
        ),
        requests: fc.array(request, { minLength: 1, maxLength: 4 }),
      });
      const scenario = fc.record({
        windows: fc.tuple(...[0, 1, 2].map(() => fc.constantFrom(WINDOWS.slice(0, 1), WINDOWS, WINDOWS.slice(1)))),
        steps: fc.array(step, { minLength: 1, maxLength: 12 }),
      });
      await fc.assert(
        fc.asyncProperty(scenario, async ({ windows, steps }) => {
          const pairs: [PreparedBoard, PreparedBoard][] = [];
          for (const w of windows) pairs.push([await setup.board(w, T0), await setup.board(w, T0)]);
          let secondMs = T0;
          for (const { pair, afterMs, moderation, requests: sent } of steps) {
            secondMs += afterMs;
            const [together, apart] = pairs[pair];
            if (moderation) {
              for (const board of [together, apart]) await moderate(board, secondMs, moderation.item, moderation.state);
            }
            const requests = [...sent]
              .sort((a, b) => a.msInSecond - b.msInSecond)
              .map(({ item, amount, newItems, msInSecond }) => ({
                item,
                amount,
                newItems,
                atMs: secondMs + msInSecond,
              }));
            const one = await answersOf(together, requests[requests.length - 1].atMs, requests);
            const each: unknown[] = [];
            for (const r of requests) each.push(...(await answersOf(apart, r.atMs, [{ ...r, createdMs: r.atMs }])));
            expect(one).toEqual(each);
          }
          for (const [together, apart] of pairs) expect(await contents(together)).toEqual(await contents(apart));
        }),
        { numRuns: 60 },
      );
    });
  },
);
