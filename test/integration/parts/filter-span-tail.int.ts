import type Redis from 'ioredis';
import { FakeClock } from '../../../harness/clock';
import { SPAN_STAGE_FIELDS_PER_CALL } from '../../../src/ranking/core/ranking.limits';
import { StandingService } from '../../../src/ranking/standing/standing.service';
import { useFiltersGraph } from '../../support/ranking-graph';

/**
 * Issue #45: a filtered read over a span of a tail board sums the span's packed records (tail_pack_lib)
 * over its staging calls, as it does the slot fields, never all of them in one call. The proxy for a
 * call's work: the members it adds to the staged listing (its ZADDs' to the sums, read from MONITOR, where the
 * commands a function runs come before its FCALL), on the test's own server.
 */
const T0 = 1_700_060_000_000;
const PACKED = 1000;
/** Records of one packed part (tail_pack_lib's RECORDS_PER_PART): a call takes whole parts. */
const RECORDS_PER_PART = 32;

describe('a filtered span read of a tail board, call by call (single, own server)', () => {
  const clock = new FakeClock(T0);
  const world = useFiltersGraph('single', clock, { own: true });

  /** The members each span_stage call added to the staged sums (ZADD score member ...). */
  async function stagedPerCall(read: () => Promise<unknown>): Promise<number[]> {
    const node = world.redis.client as Redis;
    const monitor = await node.monitor();
    const counts: number[] = [];
    let added = 0;
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua' && /^zadd$/i.test(args[0]) && args[1].endsWith(':sums')) added += (args.length - 2) / 2;
      else if (/^fcall/i.test(args[0])) {
        if (String(args[1]).endsWith('span_stage')) counts.push(added);
        added = 0;
      }
    });
    await read();
    // A command MONITOR has shown once the PING after it answered.
    await node.ping();
    await new Promise<void>((resolve) => setImmediate(resolve));
    await monitor.disconnect();
    return counts;
  }

  it(`sums ${PACKED} packed records at most ${SPAN_STAGE_FIELDS_PER_CALL} (and a part) a call`, async () => {
    const board = 'tailspan';
    const windows = [{ name: 'm', period: '1h', interval: '1m' }];
    await world.graph.ranking.putBoard({ name: board, windows, tail: { exact: 1, below: 2 } });
    const kept = Array.from({ length: PACKED }, (_, n) => ({ item: `k${n}`, amount: 2 }));
    for (let first = 0; first < PACKED; first += 200)
      await world.graph.ranking.incrementBatch(
        world.commands.batch({ board, entries: kept.slice(first, first + 200) }),
      );
    clock.advanceMs(60_000);
    // Reads prune and pack the closed minute within their budget, until its hash is gone.
    const standing = world.graph.module.get(StandingService);
    for (let reads = 0; (await world.redis.dataKeys(`board:${board}}*:slot:*`)).length > 0; reads++) {
      if (reads > 200) throw new Error('pruning and packing never finished');
      await standing.tailTop({ name: board, window: 'm', limit: 5 });
    }
    let items = 0;
    const ask = { board, window: 'm', span: '60m', offset: 0, limit: 10, excludeItems: ['k0'] };
    const calls = await stagedPerCall(async () => {
      items = (await world.filters.read(ask)).items.length;
    });
    expect(items).toBe(10);
    expect(Math.max(...calls)).toBeLessThanOrEqual(SPAN_STAGE_FIELDS_PER_CALL + RECORDS_PER_PART - 1);
    // Yet every record is summed over the read's calls.
    expect(calls.reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(PACKED);
  }, 120_000);
});
