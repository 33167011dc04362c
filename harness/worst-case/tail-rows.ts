/**
 * Worst-case rows of the `tail` option's packing (tail_pack_lib.lua) on its one-shard board of kept
 * items (./boards.ts `wc-tail-kept`: every seeded item counts 2 or more in one minute slot, so pruning
 * drops none and packing moves them all): a write packing that slot once the boundary closed it and
 * the calls before pruned it (each EXPIRE_CHUNK fields), and the write once the packed slot left the
 * window (its packed records drained within the same budget). Between them calls run until the slot
 * is packed, and a filtered span read sums the packed records over its staging calls.
 */
import { AppConfig } from '../../src/common/config';
import { SPAN_MAX_FIELDS, SPAN_STAGE_FIELDS_PER_CALL } from '../../src/ranking/core/ranking.limits';
import { post } from './board-rows';
import type { HarnessContext, WorstRow } from './harness-types';
import { HEAD_EXCLUDED } from './read-rows';

const increment = () => post('/boards/wc-tail-kept/items/i1/increment', {});

/** Sends `passes` times the calls that go once over a slot of every seeded item (EXPIRE_CHUNK fields a call), and one more. */
async function overTheSlot(context: HarnessContext, passes: number): Promise<void> {
  const calls = Math.ceil((passes * context.sizes.items) / new AppConfig().EXPIRE_CHUNK) + 1;
  for (let call = 0; call < calls; call++) await context.send(increment(), 'seeder');
}

export const TAIL_ROWS: WorstRow[] = [
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst:
      'a tail board (one shard) whose closed minute slot of every seeded item, each kept, is pruned: the call packs it within its expiry budget',
    prepare: async (context) => {
      await context.advanceSec(60);
      await overTheSlot(context, 1);
    },
    request: increment,
    settle: (context) => overTheSlot(context, 1),
  },
  {
    route: 'POST /boards/{board}/query',
    worst: `a filtered span read of that tail board's window once its slot is packed, the head excluded: the span's packed records (every seeded item; past ${SPAN_MAX_FIELDS}, a 422) copied by the first staging call, then summed whole parts at a time, ${SPAN_STAGE_FIELDS_PER_CALL} fields a call (a record weighing 1.5)`,
    request: () =>
      post('/boards/wc-tail-kept/query', {
        window: 'h',
        span: '10m',
        limit: 1000,
        exclude: { items: HEAD_EXCLUDED.items },
      }),
    expect: [200, 422],
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst:
      "that tail board once its packed slot left the window: the call drains the slot's packed records within its expiry budget",
    prepare: (context) => context.advanceSec(600),
    request: increment,
  },
];
