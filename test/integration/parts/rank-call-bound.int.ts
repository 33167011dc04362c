import { Cluster, type Redis } from 'ioredis';
import { FakeClock } from '../../../harness/clock';
import { startRankingService } from '../../../harness/ranking';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../../support/slowlog';

/**
 * The rank of a hypothetical score (GET …/rank, issue #48) is one score_rank call per shard, all sent
 * in one round, each O(log n): on boards of 100 and of 10 000 items, a read sends exactly as many
 * calls as the board has shards before any answers, and each call runs the same commands whatever
 * the board's size, none of them reading a range of rows. Counted without a clock, from the commands
 * each FCALL's script ran (SLOWLOG at 0 µs on every master).
 */
const T0 = 1_700_000_040_000;
const SIZES = [100, 10_000];
const SHARDS = [1, 3];
const BATCH_ITEMS = 1000;
/** Commands whose work grows with the rows they return, unless their arguments bound those rows. */
const RANGE_READS = /^Z(REV)?RANGE(BYSCORE|BYLEX)?$|^ZSCAN$|^HGETALL$|^HKEYS$|^HVALS$|^SMEMBERS$|^LRANGE$/i;
/** The most rows a range read of a score_rank call may return: a fixed few, never the window's rows. */
const RANGE_ROWS = 1;

/** A call's commands as the script ran them, its keys left out (they name the board). */
type CallShape = string[];

/** Amount of item n of a board of `size` items: distinct scores 1..size in a shuffled order. */
const amountOf = (n: number, size: number) => 1 + ((n * 7919) % size);

/** Rows a range read's arguments allow it to return, Infinity when nothing bounds them. */
function rangeRows(command: string[]): number {
  const limit = command.findIndex((arg) => arg.toUpperCase() === 'LIMIT');
  if (limit >= 0) return Number(command[limit + 2]) < 0 ? Infinity : Number(command[limit + 2]);
  const byIndex = /^Z(REV)?RANGE$/i.test(command[0]) && !command.some((arg) => /^BY(SCORE|LEX)$/i.test(arg));
  if (!byIndex) return Infinity;
  const [start, stop] = [Number(command[2]), Number(command[3])];
  return start < 0 || stop < 0 ? Infinity : stop - start + 1;
}

describe.each(TOPOLOGIES)('the calls of the rank of a score (%s)', (topology) => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let started: Awaited<ReturnType<typeof startRankingService>>;
  let nodes: Redis[];

  beforeAll(async () => {
    // The test reads the calls from the SLOWLOG: a server of its own on one node (it starts in
    // milliseconds), the worker's Cluster (an own one takes seconds to start on a busy machine), whose
    // calls of other files the prefix tells apart.
    redis = await startTestRedis(topology, { own: topology === 'single' });
    started = await startRankingService(redis, clock);
    nodes = redis.client instanceof Cluster ? redis.client.nodes('master') : [redis.client];
    const windows = [{ name: 'w', period: '1h', interval: '1m' }];
    for (const size of SIZES)
      for (const shards of SHARDS) {
        const name = `r${size}s${shards}`;
        await started.ranking.putBoard({ name, windows, shards, maxItems: 20_000 });
        for (let first = 0; first < size; first += BATCH_ITEMS) {
          const count = Math.min(BATCH_ITEMS, size - first);
          const entries = Array.from({ length: count }, (_, k) => ({
            item: `i${first + k}`,
            amount: amountOf(first + k, size),
          }));
          await started.ranking.incrementBatch(name, entries);
        }
      }
  }, 60_000);
  afterAll(async () => {
    await started.redisService.onApplicationShutdown();
    await redis.stop();
  });

  /** The rank of `score` on a board, the FCALLs the read sent, and the most calls it had in flight at once. */
  async function rankRead(name: string, score: number) {
    const read = () => started.standing.rank({ name, window: 'w', score });
    // The board's config is cached by a first read: the counted one reads the window only.
    await read();
    let inFlight = 0;
    let mostInFlight = 0;
    const call = started.functions.call.bind(started.functions);
    const spy = jest.spyOn(started.functions, 'call').mockImplementation(async (fn, input) => {
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      try {
        return await call(fn, input);
      } finally {
        inFlight--;
      }
    });
    try {
      await Promise.all(nodes.map(logEveryCommand));
      const answer = await read();
      const calls = (await Promise.all(nodes.map(loggedCalls))).flat();
      return { answer, mostInFlight, sent: spy.mock.calls.length, calls: fcalls(calls) };
    } finally {
      spy.mockRestore();
      await Promise.all(nodes.map(stopLoggingEveryCommand));
    }
  }

  const fcalls = (calls: LoggedCall[]) =>
    calls.filter(({ call }) => /^FCALL(_RO)?$/i.test(call[0]) && call.some((arg) => arg.includes(redis.prefix)));
  const shapeOf = ({ commands }: LoggedCall): CallShape => commands.map((command) => command[0].toUpperCase());

  it.each(SHARDS)(
    '%i shard(s): one call per shard in one round, the same O(log n) commands at 100 and 10 000 items',
    async (shards) => {
      const shapes: CallShape[][] = [];
      for (const size of SIZES) {
        // A score no item holds, in the middle: half the items are ahead of it.
        const score = Math.floor(size / 2) + 0.5;
        const { answer, mostInFlight, sent, calls } = await rankRead(`r${size}s${shards}`, score);
        // Among the listed items and itself, the other half ranks after it.
        expect(answer).toMatchObject({ rank: size / 2 + 1, percentile: 50 });

        expect(calls.map(({ call }) => call[1].replace(/^.*_(score_rank)$/, '$1'))).toEqual(
          Array.from({ length: shards }, () => 'score_rank'),
        );
        // Every shard's call is sent before any answers: one round, not one per shard.
        expect([sent, mostInFlight]).toEqual([shards, shards]);
        // No command reads a range of rows past RANGE_ROWS (a scan of the window would be O(n)).
        for (const { commands } of calls)
          for (const command of commands.filter((c) => RANGE_READS.test(c[0])))
            expect([command.join(' '), rangeRows(command) <= RANGE_ROWS]).toEqual([command.join(' '), true]);
        shapes.push(calls.map(shapeOf).sort());
      }
      // A call of the 10 000-item board runs the very commands of the 100-item one's.
      expect(shapes[1]).toEqual(shapes[0]);
    },
  );
});
