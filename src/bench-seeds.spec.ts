import { CUTS, cutLibrary, INCREMENT_PARTS, incrementPartCuts } from '../bench/coalesced-increment';
import { batchesOf, type DeclaredBoard, entriesPerCall, writeCostPerCall } from '../bench/write-batches';
import { validateConfig } from './common/config';
import { batchCost, type CostedEntry } from './ranking/core/write-cost';
import { optionsOfPut } from './ranking/options/registry';

/**
 * What keeps the benchmarks true as the product changes (issue #46): a part that seeds in batches the
 * write bound refuses, or cuts text the library no longer holds, fails here rather than in a bench run.
 */
const BOUND = validateConfig({}).WRITE_COST_PER_CALL;
const HOUR = { name: 'hour', period: '1h', interval: '1m' };
const WINDOWS = [HOUR, { name: 'day', period: '24h', interval: '1h' }, { name: 'week', period: '7d', interval: '1d' }];

/** The boards and entries the benches seed or flood with (bench/ties.ts, worst-requests.ts, abuse/…). */
const SEEDS: Array<[string, DeclaredBoard, CostedEntry]> = [
  ['ties: first (ties)', { windows: [HOUR], ties: 'first' }, {}],
  ['3 windows (worst, abuse-growth)', { windows: WINDOWS }, {}],
  ['a decay view (abuse-exactness, trending)', { windows: [HOUR], views: [{ name: 'v', mode: 'decay' }] } as never, {}],
  ['actors and a unique view (abuse-growth)', { windows: WINDOWS, actors: true, views: [{}] } as never, { actor: 'a' }],
  ['8 segments (abuse-growth)', { windows: WINDOWS, segments: { max: 1000 } }, { segments: [...'abcdefgh'] }],
];

/** What BatchWrite.checkCost weighs: the costliest call of `count` entries like `entry` on one shard. */
function callOf(board: DeclaredBoard, entry: CostedEntry, count: number): number {
  const costed = { ...optionsOfPut(board), windows: board.windows, views: board.views ?? [] };
  return batchCost([Array.from({ length: count }, () => entry)], costed, BOUND).costliestCall;
}

describe('bench seeds', () => {
  it.each(SEEDS)('batches on a board of %s are the largest the write bound admits', (_, board, entry) => {
    const size = entriesPerCall(board, entry, BOUND);
    expect(callOf(board, entry, size)).toBeLessThanOrEqual(BOUND);
    expect(callOf(board, entry, size + 1)).toBeGreaterThan(BOUND);
  });

  it('reads the bound the service runs with', () => {
    expect(writeCostPerCall({})).toBe(BOUND);
    expect(writeCostPerCall({ WRITE_COST_PER_CALL: '500' })).toBe(500);
  });

  it('splits entries into batches of at most the size, in order', () => {
    expect(batchesOf([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
  });
});

describe("coalesced-increment's cuts", () => {
  it.each(CUTS.map((cut) => [cut.label, cut]))('%s: the library holds the text it cuts', (_, cut) => {
    expect(() => cutLibrary('tb_cut', cut)).not.toThrow();
  });
});

describe("redis-instructions' increment parts (INSTR_PARTS)", () => {
  it.each(INCREMENT_PARTS.map((part) => [part.label, part]))('%s: the increment holds its line once', (_, part) => {
    expect(() => incrementPartCuts([part])).not.toThrow();
  });

  it('cuts the library in the order the increment runs, each copy returning before its line', () => {
    const cuts = incrementPartCuts();
    expect(cuts.map((cut) => cut.label)).toEqual(INCREMENT_PARTS.map((part) => part.label));
    for (const cut of cuts) expect(cutLibrary('tb_parts', cut)).toContain(cut.to);
  });

  it('refuses a line the increment does not hold, or a part before the one it follows', () => {
    expect(() => incrementPartCuts([{ label: 'gone', before: 'local context = ARGV[' }])).toThrow(/not on one line/);
    expect(() => incrementPartCuts([...INCREMENT_PARTS].reverse())).toThrow(/not on one line/);
  });
});
