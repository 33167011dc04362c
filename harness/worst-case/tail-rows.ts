/**
 * Worst-case rows of the `tail` option's packing (tail_pack_lib.lua) on its one-shard board of kept
 * items (./boards.ts `wc-tail-kept`: every seeded item counts 2 or more in one minute slot, so pruning
 * drops none and packing moves them all): a write packing that slot once the boundary closed it and
 * the calls before pruned it (each EXPIRE_CHUNK fields), and the write once the packed slot left the
 * window (its packed records drained within the same budget). Between them calls run until the slot
 * is packed, and a filtered span read sums the packed records over its staging calls. Last, a write
 * pruning `wc-tail-small`'s closed minute of items seen once, small enough that HSCAN answers it whole.
 */
import { AppConfig } from '../../src/common/config';
import { SPAN_MAX_FIELDS, SPAN_STAGE_FIELDS_PER_CALL } from '../../src/ranking/core/ranking.limits';
import { post } from './board-rows';
import type { HarnessContext, WorstRow } from './harness-types';
import { get, HEAD_EXCLUDED } from './read-rows';
import { batches, drained } from './seed';

const increment = () => post('/boards/wc-tail-kept/items/i1/increment', {});
/** Items seen once in wc-tail-small's closed minute: a listpack slot (hash-max-listpack-entries, 512 here). */
const SMALL_SLOT_ITEMS = 500;

/** Sends `passes` times the calls that go once over a slot of every seeded item (EXPIRE_CHUNK fields a call), and one more. */
async function overTheSlot(context: HarnessContext, passes: number): Promise<void> {
  const calls = Math.ceil((passes * context.sizes.items) / new AppConfig().EXPIRE_CHUNK) + 1;
  for (let call = 0; call < calls; call++) await context.send(increment(), 'seeder');
}

export const TAIL_ROWS: WorstRow[] = [
  // The rows before moved the clock past some of the tail boards' minutes: the slots that left their
  // hour are drained first (a read draining 100 000 fields a slot measures the drain, not the page).
  {
    route: 'GET /boards/{board}/top',
    worst: 'a tail board: the deepest page (rows 1 000 to 2 000) over 64 shards, every closed minute slot pruned',
    prepare: (context) => drained(context, '/boards/wc-tail/top?window=h&limit=1'),
    request: () => get('/boards/wc-tail/top?window=h&offset=1000&limit=1000'),
  },
  {
    route: 'GET /boards/{board}/top',
    worst:
      "a tail board's deepest page on one shard: 2 064 rows kept by the first call, then answered 256 a call, each row bounded once (a look at every pruned slot's filter, bounded per call, learnt rows cached)",
    prepare: (context) => drained(context, '/boards/wc-tail-one/top?window=h&limit=1'),
    request: () => get('/boards/wc-tail-one/top?window=h&offset=1000&limit=1000'),
  },
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
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: `a tail board (one shard) whose closed minute holds ${SMALL_SLOT_ITEMS} items seen once, a slot HSCAN answers whole: the call prunes what its expiry budget pays of it, not the slot`,
    prepare: async (context) => {
      await batches(context, 'wc-tail-small', SMALL_SLOT_ITEMS, (n) => ({ item: `o${n}`, amount: 1 }));
      await context.advanceSec(60);
    },
    request: () => post('/boards/wc-tail-small/items/now/increment', {}),
  },
];
