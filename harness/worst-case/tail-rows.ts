/**
 * Worst-case rows of the `tail` option's packing (tail_pack_lib.lua) on its one-shard board of kept
 * items (./boards.ts `wc-tail-kept`: every seeded item counts 2 or more in one minute slot, so pruning
 * drops none and packing moves them all): the write after the boundary that closed that slot (pruning,
 * then packing, within the call's expiry budget), and the write once the packed slot left the window
 * (its packed records drained within the same budget). Between them every ten minutes' calls run
 * until the slot is packed.
 */
import { AppConfig } from '../../src/common/config';
import { post } from './board-rows';
import type { HarnessContext, WorstRow } from './harness-types';

const increment = () => post('/boards/wc-tail-kept/items/i1/increment', {});

/** Calls until a slot of `items` fields is pruned and packed, EXPIRE_CHUNK fields a call (and a few more). */
async function untilPacked(context: HarnessContext): Promise<void> {
  const calls = Math.ceil((2 * context.sizes.items) / new AppConfig().EXPIRE_CHUNK) + 4;
  for (let call = 0; call < calls; call++) await context.send(increment(), 'seeder');
}

export const TAIL_ROWS: WorstRow[] = [
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst:
      'a tail board (one shard) after the boundary that closed a minute slot of every seeded item, each kept: the call prunes, then packs, within its expiry budget',
    prepare: (context) => context.advanceSec(60),
    request: increment,
    settle: (context) => untilPacked(context),
  },
  {
    route: 'POST /boards/{board}/items/{item}/increment',
    worst: "that tail board once its packed slot left the window: the call drains the slot's packed records within its expiry budget",
    prepare: (context) => context.advanceSec(600),
    request: increment,
  },
];
