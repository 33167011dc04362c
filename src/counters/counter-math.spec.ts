import calculateSlot from 'cluster-key-slot';
import { validateConfig } from '../common/config';
import { stepStartSec } from '../common/duration';
import {
  atProblem,
  isDueOnPass,
  isLive,
  oldestLiveSlice,
  parsePrecisionList,
  passesBetweenVisits,
  precisionsCovering,
  resolvePrecision,
  retentionCutoff,
  shapeSamples,
} from './counter-math';
import { CounterKeys, member, parseMember } from './counter-keys';
import { CountersSettings } from './counters.settings';

const DEFAULT = [1, 5, 60, 300, 3600, 18000, 86400];

describe('slice maths', () => {
  it('keeps exactly the N newest slices, the current one included', () => {
    const now = 1_000_003;
    const live = [];
    for (let t = stepStartSec(now, 5) - 200; t <= stepStartSec(now, 5); t += 5) if (isLive(t, now, 4, 5)) live.push(t);
    expect(live).toEqual([999_985, 999_990, 999_995, 1_000_000]);
    expect(oldestLiveSlice(now, 4, 5)).toBe(999_985);
    expect(retentionCutoff(now, 4, 5)).toBe(999_983);
  });

  it('lists the precisions whose retention still covers a late sample', () => {
    const now = 1_700_000_000;
    expect(precisionsCovering(now, now, 120, DEFAULT)).toEqual(DEFAULT);
    expect(precisionsCovering(now - 119, now, 120, DEFAULT)).toEqual(DEFAULT);
    expect(precisionsCovering(now - 120, now, 120, DEFAULT)).toEqual([5, 60, 300, 3600, 18000, 86400]);
    expect(precisionsCovering(now - 3600, now, 120, DEFAULT)).toEqual([60, 300, 3600, 18000, 86400]);
    expect(precisionsCovering(now - 200 * 86400, now, 120, DEFAULT)).toEqual([]);
  });

  it('paces the cleaner by precision: every max(1, floor(p / 60)) passes', () => {
    expect([1, 5, 59, 60, 119, 300, 3600, 86400].map(passesBetweenVisits)).toEqual([1, 1, 1, 1, 1, 5, 60, 1440]);
    expect([0, 1, 2, 3, 4, 5, 10].map((pass) => isDueOnPass(300, pass))).toEqual([
      true,
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
    expect(isDueOnPass(1, 7)).toBe(true);
  });
});

describe('at validation', () => {
  const now = 1_700_000_000;
  it('accepts now, a little skew and late samples some precision keeps', () => {
    expect(atProblem(now, now, 120, DEFAULT)).toBeUndefined();
    expect(atProblem(now + 5, now, 120, DEFAULT)).toBeUndefined();
    expect(atProblem(now - 100 * 86400, now, 120, DEFAULT)).toBeUndefined();
  });
  it('refuses the future beyond 5 s and the past beyond the longest retention, saying why', () => {
    expect(atProblem(now + 6, now, 120, DEFAULT)?.kind).toBe('future');
    expect(atProblem(now + 6, now, 120, DEFAULT)?.message).toMatch(/at must not be more than 5 s in the future/);
    expect(atProblem(now - 120 * 86400, now, 120, DEFAULT)?.kind).toBe('past');
    expect(atProblem(now - 120 * 86400, now, 120, DEFAULT)?.message).toMatch(
      /at is older than the longest retention \(120 samples x 86400 s\): the oldest accepted is 1689638400 \(at 1689632000, now 1700000000\)/,
    );
    expect(atProblem(oldestLiveSlice(now, 120, 86400), now, 120, DEFAULT)).toBeUndefined();
    expect(atProblem(oldestLiveSlice(now, 120, 86400) - 1, now, 120, DEFAULT)).toBeDefined();
  });
});

describe('precision parsing and validation', () => {
  it('parses a configured list, sorted', () => {
    expect(parsePrecisionList('60, 1,5')).toEqual({ precisions: [1, 5, 60] });
    expect(parsePrecisionList('1,5,60,300,3600,18000,86400')).toEqual({ precisions: DEFAULT });
  });
  it.each([
    ['0', /between 1 and/],
    ['1,x', /"x" is not a positive integer/],
    ['1,-5', /not a positive integer/],
    ['1,1', /listed twice/],
    ['', /not a positive integer/],
    ['1.5', /not a positive integer/],
  ])('refuses %j', (value, message) => {
    const result = parsePrecisionList(value);
    expect('error' in result && result.error).toMatch(message);
  });

  it('resolves a requested precision given as seconds or a duration, only when configured', () => {
    expect(resolvePrecision('60', DEFAULT)).toBe(60);
    expect(resolvePrecision('1m', DEFAULT)).toBe(60);
    expect(resolvePrecision('5h', DEFAULT)).toBe(18000);
    expect(resolvePrecision('1d', DEFAULT)).toBe(86400);
    expect(resolvePrecision(5, DEFAULT)).toBe(5);
    expect(resolvePrecision('2', DEFAULT)).toBeUndefined();
    expect(resolvePrecision('abc', DEFAULT)).toBeUndefined();
    expect(resolvePrecision(undefined, DEFAULT)).toBeUndefined();
    expect(resolvePrecision('-1', DEFAULT)).toBeUndefined();
  });

  it('validates the counter settings at boot', () => {
    expect(CountersSettings.from(validateConfig({}))).toEqual({
      precisions: DEFAULT,
      samples: 120,
      buckets: 16,
      cleanBatch: 100,
      cleanIntervalMs: 60000,
      maxCounters: 100_000,
      bucketCap: 6250,
      schedulerEnabled: true,
      idempotencyRetentionMs: 86_400_000,
    });
    expect(CountersSettings.from(validateConfig({ MAX_COUNTERS: '10', COUNTER_INDEX_BUCKETS: '4' })).bucketCap).toBe(3);
    expect(CountersSettings.from(validateConfig({ MAX_COUNTERS: '0' })).bucketCap).toBe(0);
    expect(
      CountersSettings.from(validateConfig({ COUNTER_PRECISIONS: '60,1', COUNTER_SAMPLES: '10' })).precisions,
    ).toEqual([1, 60]);
    expect(() => validateConfig({ COUNTER_PRECISIONS: '1,0' })).toThrow(
      /COUNTER_PRECISIONS must be comma-separated positive integers/,
    );
    expect(() => validateConfig({ COUNTER_PRECISIONS: '5,5' })).toThrow(/COUNTER_PRECISIONS/);
    expect(() => validateConfig({ COUNTER_PRECISIONS: '1m' })).toThrow(/COUNTER_PRECISIONS/);
    expect(() => validateConfig({ COUNTER_SAMPLES: '0' })).toThrow(/COUNTER_SAMPLES/);
    expect(() => validateConfig({ COUNTER_INDEX_BUCKETS: 'x' })).toThrow(/COUNTER_INDEX_BUCKETS/);
  });
});

describe('shaping samples for a read', () => {
  const now = 1_000_000;
  const stored = [
    { t: 999_990, count: 3 },
    { t: 999_950, count: 9 }, // outside the retention of 4 x 5 s
    { t: 999_980, count: 1 },
    { t: 1_000_000, count: 2 },
  ];
  const base = { nowSec: now, samples: 4, precisionSec: 5, fill: false };
  it('answers live slices only, oldest first', () => {
    expect(shapeSamples(stored, base)).toEqual([
      { t: 999_990, count: 3 },
      { t: 1_000_000, count: 2 },
    ]);
  });
  it('cuts to [from, to] by overlap', () => {
    expect(shapeSamples(stored, { ...base, fromSec: 999_994 })).toEqual([
      { t: 999_990, count: 3 },
      { t: 1_000_000, count: 2 },
    ]);
    expect(shapeSamples(stored, { ...base, fromSec: 999_995, toSec: 999_999 })).toEqual([]);
  });
  it('fills empty slices with zeros, clamped to the retention and now', () => {
    expect(shapeSamples(stored, { ...base, fill: true })).toEqual([
      { t: 999_985, count: 0 },
      { t: 999_990, count: 3 },
      { t: 999_995, count: 0 },
      { t: 1_000_000, count: 2 },
    ]);
    expect(shapeSamples([], { ...base, fill: true, fromSec: 0, toSec: 999_996 })).toEqual([
      { t: 999_985, count: 0 },
      { t: 999_990, count: 0 },
      { t: 999_995, count: 0 },
    ]);
    expect(shapeSamples([{ t: 1_000_005, count: 1 }], { ...base, fill: true, fromSec: 999_999 })).toEqual([
      { t: 999_995, count: 0 },
      { t: 1_000_000, count: 0 },
      { t: 1_000_005, count: 1 },
    ]);
  });
});

describe('counter keys', () => {
  it('puts every key of a counter and its index entry under one hash tag', () => {
    const keys = new CounterKeys('tb:', 16);
    for (const name of ['hits', 'a', 'x.y:z-1_2', 'Z'.repeat(64)]) {
      const all = [keys.knownOf(name), ...DEFAULT.map((p) => keys.count(name, p))];
      expect(new Set(all.map((key) => calculateSlot(key))).size).toBe(1);
      expect(keys.count(name, 5)).toBe(`{tb:cnt:${keys.bucketOf(name)}}:count:5:${name}`);
    }
  });
  it('spreads names over the buckets', () => {
    const keys = new CounterKeys('tb:', 16);
    const buckets = new Set(Array.from({ length: 200 }, (_, i) => keys.bucketOf(`c${i}`)));
    expect(buckets.size).toBe(16);
  });
  it('splits index members', () => {
    expect(member(60, 'a:b')).toBe('60:a:b');
    expect(parseMember('60:a:b')).toEqual({ precisionSec: 60, name: 'a:b' });
    expect(parseMember('x:a')).toBeUndefined();
  });
});
