import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { LOOKUP_COUNTS_PER_CALL, LOOKUP_NODE_UNITS_PER_CALL } from '../../../src/ranking/core/ranking.limits';
import type { RedisFunctions } from '../../../src/redis/redis-functions';
import type Redis from 'ioredis';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../../support/slowlog';

/**
 * A lookup on a 64-shard board, every shard on one node (lookup_node, issue #45): one id's counts over
 * every shard of `ties: first` were one call of 325 commands (11.6-17.0 M instructions on the
 * worst-case harness's board); they now go in parts of the shards, each call within
 * LOOKUP_NODE_UNITS_PER_CALL weighted units (a command each at most), the answers those of a one-shard
 * twin, also when writes move an id between its parts' calls (a part that read another standing counts
 * again, within its part: no call over every shard). A plain board's calls take 3 ids over every shard
 * (within LOOKUP_COUNTS_PER_CALL). Counted from the commands each FCALL's script ran (SLOWLOG at 0 µs),
 * without a clock.
 */
const T0 = 1_699_999_980_000;
const SHARDS = 64;
const ITEMS = 640;
const IDS = Array.from({ length: 31 }, (_, n) => `i${(n * 7) % ITEMS}`);
/** The most ids a plain 64-shard lookup takes (LOOKUP_COUNTS_PER_REQUEST's default over 64 shards). */
const PLAIN_IDS = Array.from({ length: Math.floor(6000 / SHARDS) }, (_, n) => `i${(n * 7) % ITEMS}`);
/** The parts an id's counts over 64 shards of `ties: first` go in (7 units a shard: 28 shards a part). */
const TIES_FIRST_PARTS = 3;

/**
 * Sends the first write of `write` before the first lookup_node call counting a later part of the
 * shards (the parts' calls are sent together: the first part then counts before the write, the
 * others after it). Answers the restore.
 */
function writeBetweenParts(functions: RedisFunctions, write: () => Promise<unknown>): () => void {
  let pending = true;
  return writeBefore(functions, (counted) => {
    if (!pending || counted[0] === 0) return null;
    pending = false;
    return write();
  });
}

/** Sends `write` before every lookup_node call but the first (the other parts', and each re-count). Answers the restore. */
function writeBeforeLaterCalls(functions: RedisFunctions, write: () => Promise<unknown>): () => void {
  let calls = 0;
  return writeBefore(functions, () => (calls++ > 0 ? write() : null));
}

/** Awaits what `before` answers (given the shards a lookup_node call counts) before that call. Answers the restore. */
function writeBefore(functions: RedisFunctions, before: (counted: number[]) => Promise<unknown> | null): () => void {
  const call = functions.call.bind(functions);
  functions.call = (async (fn, input) => {
    const counted = (input as { counted?: number[] }).counted;
    if (counted) await before(counted);
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
    await ranking.putBoard({ name: 'flat-one', windows });
    await ranking.putBoard({ name: 'flat-many', windows, shards: SHARDS });
    // Seven scores: every id ties with items of every shard, its rank by tie marks. A batch's entries
    // of one millisecond, each of its own score: marks of one millisecond order shards by index, not
    // by the one shard's sequence.
    const entries = Array.from({ length: ITEMS }, (_, n) => ({ item: `i${n}`, amount: 1 + (n % 7) }));
    for (let k = 0; k < ITEMS; k += 7) {
      for (const name of ['one', 'many', 'flat-one', 'flat-many'])
        await ranking.incrementBatch(name, entries.slice(k, k + 7));
      clock.advanceMs(1);
    }
    clock.advanceMs(1_000);
  });

  it('looks up the most ids the cost cap takes (31) in calls of at most LOOKUP_NODE_UNITS_PER_CALL commands, as one shard does', async () => {
    const { lookup, node } = own();
    const ask = { window: 'm', items: IDS, relative: false, withData: true };
    const expected = await lookup.lookup({ name: 'one', ...ask });
    const { looked, calls } = await loggedLookup(node, () => lookup.lookup({ name: 'many', ...ask }));
    expect(looked.items).toEqual(expected.items);
    // Several parts an id: more calls than ids, each within the bound (before: 31 calls of 325 commands).
    expect(calls.length).toBeGreaterThan(IDS.length);
    expect(mostCommands(calls)).toBeLessThanOrEqual(LOOKUP_NODE_UNITS_PER_CALL);
  });

  it("answers an id's rank after a write that moved it between its parts' calls, as one shard does, no call over the bound", async () => {
    const { ranking, lookup, functions, node } = own();
    const ask = { window: 'm', items: ['i5'], relative: false, withData: false };
    const restore = writeBetweenParts(functions, () => ranking.increment('many', 'i5', 3));
    try {
      const { looked, calls } = await loggedLookup(node, () => lookup.lookup({ name: 'many', ...ask }));
      await ranking.increment('one', 'i5', 3);
      expect(looked.items).toEqual((await lookup.lookup({ name: 'one', ...ask })).items);
      // Before: the parts' calls, then one call over every shard (325 commands).
      expect(mostCommands(calls)).toBeLessThanOrEqual(LOOKUP_NODE_UNITS_PER_CALL);
      expect(calls.length).toBeLessThanOrEqual(2 * TIES_FIRST_PARTS - 1);
    } finally {
      restore();
    }
  });

  it('answers exactly under a write before every call but the first, in at most twice the parts, each within the bound', async () => {
    const { ranking, lookup, functions, node } = own();
    // A millisecond of its own: no other item's tie mark shares it.
    clock.advanceMs(1);
    const ask = { window: 'm', items: ['i12'], relative: false, withData: false };
    const restore = writeBeforeLaterCalls(functions, () => ranking.increment('many', 'i12', 3));
    try {
      const { looked, calls } = await loggedLookup(node, () => lookup.lookup({ name: 'many', ...ask }));
      const before = (await lookup.lookup({ name: 'one', ...ask })).items[0].score;
      // The standing its own shard's part read: the twin moved as far.
      await ranking.increment('one', 'i12', looked.items[0].score - before);
      expect(looked.items).toEqual((await lookup.lookup({ name: 'one', ...ask })).items);
      expect(looked.items[0].score).toBeGreaterThan(before);
      expect(mostCommands(calls)).toBeLessThanOrEqual(LOOKUP_NODE_UNITS_PER_CALL);
      expect(calls.length).toBeLessThanOrEqual(2 * TIES_FIRST_PARTS - 1);
    } finally {
      restore();
    }
  });

  it('looks up the most ids a plain 64-shard board takes (93) in calls of 3 ids, each at most LOOKUP_COUNTS_PER_CALL commands, as one shard does', async () => {
    const { lookup, node } = own();
    const ask = { window: 'm', items: PLAIN_IDS, relative: false, withData: true };
    const expected = await lookup.lookup({ name: 'flat-one', ...ask });
    const { looked, calls } = await loggedLookup(node, () => lookup.lookup({ name: 'flat-many', ...ask }));
    expect(looked.items).toEqual(expected.items);
    // 3 ids' counts over 64 shards and the shards' reads: 448 units, at most ~7 M instructions a call.
    expect(calls.length).toBe(PLAIN_IDS.length / 3);
    expect(mostCommands(calls)).toBeLessThanOrEqual(LOOKUP_COUNTS_PER_CALL);
  });
});

/** The lookup_node calls `read` ran on `node`, each with its script's commands, and its answer. */
async function loggedLookup<T>(node: Redis, read: () => Promise<T>): Promise<{ looked: T; calls: LoggedCall[] }> {
  await logEveryCommand(node);
  const looked = await read();
  const calls = (await loggedCalls(node)).filter(({ call }) => /_lookup_node$/.test(String(call[1])));
  await stopLoggingEveryCommand(node);
  return { looked, calls };
}

const mostCommands = (calls: LoggedCall[]) => Math.max(...calls.map(({ commands }) => commands.length));
