import fc from 'fast-check';
import { CounterWheel, LatencyWheel, TimeWheel } from './time-wheel';

describe('TimeWheel', () => {
  const options = { bucketMs: 1000, spanBuckets: 60, spareBuckets: 3 };

  it('sums the last N complete buckets, excluding the one being written unless asked', () => {
    const counter = new CounterWheel(options);
    counter.add(10_000);
    counter.add(10_999, 2);
    counter.add(11_000, 5);
    expect(counter.sum(11_500, 1)).toBe(3);
    expect(counter.sum(11_500, 1, true)).toBe(5);
    expect(counter.sum(11_500, 2, true)).toBe(8);
    expect(counter.sum(12_000, 2)).toBe(8);
  });

  it('reads buckets of an older round as empty, after an idle gap longer than the span', () => {
    const counter = new CounterWheel(options);
    counter.add(5_000, 7);
    const later = 5_000 + 63_000; // same ring index, three spare buckets later: a new round
    expect(counter.sum(later, 60, true)).toBe(0);
    counter.add(later, 1);
    expect(counter.sum(later, 60, true)).toBe(1);
    expect(counter.sum(later + 10 * 3_600_000, 60, true)).toBe(0);
  });

  it('handles clock jumps backwards without mixing rounds', () => {
    const counter = new CounterWheel(options);
    counter.add(100_000, 4);
    counter.add(40_000, 9); // an earlier round lands in a bucket of its own
    expect(counter.sum(100_500, 60, true)).toBe(4);
    expect(counter.sum(40_500, 60, true)).toBe(9);
  });

  it('caps a read at the span', () => {
    const wheel = new TimeWheel({ bucketMs: 100, spanBuckets: 5 }, () => ({ n: 1 }));
    for (let t = 0; t < 2_000; t += 100) wheel.current(t);
    expect(wheel.last(2_000, 50)).toHaveLength(5);
  });

  it('latencies keep count, errors, sum, min and max per bucket', () => {
    const latency = new LatencyWheel(options);
    latency.record(1_000, 5, false);
    latency.record(1_500, 15, true);
    latency.record(2_100, 1, false);
    expect(latency.summary(3_000, 2)).toEqual({ requests: 3, errors: 1, sumMs: 21, minMs: 1, maxMs: 15, avgMs: 7 });
    expect(latency.summary(3_000, 1)).toMatchObject({ requests: 1, maxMs: 1 });
    expect(latency.summary(90_000, 60)).toEqual({ requests: 0, errors: 0, sumMs: 0, minMs: 0, maxMs: 0, avgMs: 0 });
  });

  it('matches a naive list of timestamped events under random writes, reads, gaps and jumps', () => {
    const event = fc.record({
      advanceMs: fc.oneof(fc.integer({ min: 0, max: 1_500 }), fc.integer({ min: 0, max: 200_000 })),
      amount: fc.integer({ min: 1, max: 5 }),
    });
    const read = fc.record({ buckets: fc.integer({ min: 0, max: 70 }), includeCurrent: fc.boolean() });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e12 }),
        fc.array(fc.tuple(event, read), { maxLength: 200 }),
        (startMs, steps) => {
          const counter = new CounterWheel({ bucketMs: 250, spanBuckets: 40, spareBuckets: 2 });
          const events: Array<{ atMs: number; amount: number }> = [];
          let nowMs = startMs;
          for (const [e, r] of steps) {
            nowMs += e.advanceMs;
            counter.add(nowMs, e.amount);
            events.push({ atMs: nowMs, amount: e.amount });
            const current = Math.floor(nowMs / 250);
            const newest = current - (r.includeCurrent ? 0 : 1);
            const oldest = newest - Math.min(r.buckets, 40) + 1;
            const expected = events
              .filter((x) => Math.floor(x.atMs / 250) >= oldest && Math.floor(x.atMs / 250) <= newest)
              .reduce((s, x) => s + x.amount, 0);
            expect(counter.sum(nowMs, r.buckets, r.includeCurrent)).toBe(expected);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
