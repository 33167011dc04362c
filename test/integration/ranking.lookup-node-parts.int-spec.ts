import { FakeClock } from '../../harness/clock';
import { useOwnServerRanking } from '../../harness/ranking';
import { LOOKUP_NODE_UNITS_PER_CALL } from '../../src/ranking/core/ranking.limits';
import type { RedisFunctions } from '../../src/redis/redis-functions';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand } from '../support/slowlog';

/**
 * A lookup on a 64-shard `ties: first` board, every shard on one node (lookup_node, issue #45): one
 * id's counts over every shard were one call of 325 commands (11.6-17.0 M instructions on the
 * worst-case harness's board); they now go in parts of the shards, each call within
 * LOOKUP_NODE_UNITS_PER_CALL weighted units (a command each at most), the answers those of a one-shard
 * twin, also when a write moves an id between its parts. Counted from the commands each FCALL's script
 * ran (SLOWLOG at 0 µs), without a clock.
 */
const T0 = 1_699_999_980_000;
const SHARDS = 64;
const ITEMS = 640;
const IDS = Array.from({ length: 31 }, (_, n) => `i${(n * 7) % ITEMS}`);

/**
 * Sends the first write of `write` before the first lookup_node call counting a later part of the
 * shards (the parts' calls are sent together: the first part then counts before the write, the
 * others after it). Answers the restore.
 */
function writeBetweenParts(functions: RedisFunctions, write: () => Promise<unknown>): () => void {
  const call = functions.call.bind(functions);
  let pending = true;
  functions.call = (async (fn, input) => {
    const counted = (input as { counted?: number[] }).counted;
    if (pending && counted && counted[0] > 0) {
      pending = false;
      await write();
    }
    return await call(fn, input);
  }) as typeof functions.call;
  return () => {
    functions.call = call;
  };
}

describe('a lookup of a 64-shard ties: first board on one node, in parts of the shards (single)', () => {
  const clock = new FakeClock(T0);
  // A server of its own: the test reads every command it ran from its SLOWLOG.
  const own = useOwnServerRanking(clock);

  beforeAll(async () => {
    const { ranking } = own();
    const windows = [{ name: 'm', period: 3600, interval: 60 }];
    await ranking.putBoard({ name: 'one', windows, ties: 'first' });
    await ranking.putBoard({ name: 'many', windows, ties: 'first', shards: SHARDS });
    // Seven scores: every id ties with items of every shard, its rank by tie marks. A batch's entries
    // of one millisecond, each of its own score: marks of one millisecond order shards by index, not
    // by the one shard's sequence.
    const entries = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: 1 + (n % 7) }));
    for (let k = 0; k < ITEMS; k += 7) {
      for (const name of ['one', 'many']) await ranking.incrementBatch(name, entries.slice(k, k + 7));
      clock.advanceMs(1);
    }
    clock.advanceMs(1_000);
  });

  it('looks up the most ids the cost cap takes (31) in calls of at most LOOKUP_NODE_UNITS_PER_CALL commands, as one shard does', async () => {
    const { lookup, node } = own();
    const ask = { window: 'm', items: IDS, relative: false, withData: true };
    const expected = await lookup.lookup({ name: 'one', ...ask });
    await logEveryCommand(node);
    const looked = await lookup.lookup({ name: 'many', ...ask });
    const calls = (await loggedCalls(node)).filter(({ call }) => /_lookup_node$/.test(String(call[1])));
    await stopLoggingEveryCommand(node);
    expect(looked.items).toEqual(expected.items);
    // Several parts an id: more calls than ids, each within the bound (before: 31 calls of 325 commands).
    expect(calls.length).toBeGreaterThan(IDS.length);
    expect(Math.max(...calls.map(({ commands }) => commands.length))).toBeLessThanOrEqual(LOOKUP_NODE_UNITS_PER_CALL);
  });

  it("answers an id's rank after a write that moved it between its parts' calls, as one shard does", async () => {
    const { ranking, lookup, functions } = own();
    const ask = { window: 'm', items: ['i5'], relative: false, withData: false };
    const restore = writeBetweenParts(functions, () => ranking.increment('many', 'i5', 3));
    try {
      const looked = await lookup.lookup({ name: 'many', ...ask });
      await ranking.increment('one', 'i5', 3);
      expect(looked.items).toEqual((await lookup.lookup({ name: 'one', ...ask })).items);
    } finally {
      restore();
    }
  });
});
