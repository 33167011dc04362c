import { COUNT_SHARD_WEIGHT, LOOKUP_COUNTS_PER_CALL, LOOKUP_NODE_UNITS_PER_CALL } from '../core/ranking.limits';
import { optionsCountWeight } from '../options/registry';
import type { LookupNodeReply } from './lookup.functions';
import { countedParts, lookupInParts, nodeIdsPerCall, nodeParts, type CountedBoard, type PartCall } from './node-parts';

const boardOf = (config: CountedBoard['config'], shards: number): CountedBoard => ({
  config,
  shards: Array.from({ length: shards }),
});

describe('lookup_node calls', () => {
  const configs: Array<[string, CountedBoard['config']]> = [
    ['plain', {}],
    ['ties: first', { ties: 'first' }],
  ];

  it.each(configs)(
    'of a %s board of 2-64 shards count at most LOOKUP_COUNTS_PER_CALL units, LOOKUP_NODE_UNITS_PER_CALL when split',
    (_, config) => {
      for (let shards = 2; shards <= 64; shards++) {
        const board = boardOf(config, shards);
        const ids = nodeIdsPerCall(board, true);
        const parts = nodeParts(board, true, ids);
        const units = (part: number[]) => part.length * (ids * optionsCountWeight(config) + COUNT_SHARD_WEIGHT);
        const bound = parts.length > 1 ? LOOKUP_NODE_UNITS_PER_CALL : LOOKUP_COUNTS_PER_CALL;
        expect(Math.max(...parts.map(units))).toBeLessThanOrEqual(bound);
        expect(parts.flat()).toEqual(board.shards.map((__, s) => s));
      }
    },
  );

  it('of 64 shards: 3 ids over every shard on a plain board, one id in 3 parts on ties: first', () => {
    expect(nodeIdsPerCall(boardOf({}, 64), true)).toBe(3);
    expect(nodeParts(boardOf({}, 64), true, 3)).toHaveLength(1);
    expect(nodeIdsPerCall(boardOf({ ties: 'first' }, 64), true)).toBe(1);
    expect(countedParts(boardOf({ ties: 'first' }, 64), 1).map((part) => part.length)).toEqual([22, 22, 20]);
  });
});

describe('lookupInParts', () => {
  // Two parts of two shards; the id's own shard is 3 (the second part). Items ahead of score 10 on
  // each shard: 1 (shard 0), 2 (shard 1); ahead of 12: none on shard 0, 1 on shard 1.
  const parts = [
    [0, 1],
    [2, 3],
  ];
  const aheadOf = (score: number, part: number[]) =>
    part.reduce((sum, shard) => sum + (shard === 0 ? Number(score < 11) : shard === 1 ? 1 + Number(score < 11) : 0), 0);

  it("counts again, ahead of the standing its own shard's part read, a part that read another", async () => {
    const calls: PartCall[] = [];
    // The first part's call read the id at 10, then a write moved it to 12 before the second's.
    const read = [10, 12];
    const answer = await lookupInParts([3], parts, false, async (call): Promise<LookupNodeReply> => {
      calls.push(call);
      const score = call.given ? call.given.scores[0] : read[calls.length - 1];
      return { scores: [score], marks: [''], data: [null], ranks: [1 + aheadOf(score, call.counted)] };
    });
    expect(calls.map(({ counted, given }) => [counted, given?.scores ?? null])).toEqual([
      [[0, 1], null],
      [[2, 3], null],
      [[0, 1], [12]],
    ]);
    expect(answer).toEqual({ scores: [12], marks: [''], data: [null], ranks: [1 + aheadOf(12, [0, 1, 2, 3])] });
  });

  it('answers the parts as read when they read one standing', async () => {
    const calls: PartCall[] = [];
    const answer = await lookupInParts([0], parts, true, async (call) => {
      calls.push(call);
      return { scores: [10], marks: [''], data: [null], ranks: [1 + aheadOf(10, call.counted)] };
    });
    expect(calls.map(({ withData }) => withData)).toEqual([true, false]);
    expect(answer?.ranks).toEqual([1 + aheadOf(10, [0, 1, 2, 3])]);
  });
});
