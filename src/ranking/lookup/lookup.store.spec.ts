import { COUNT_SHARD_WEIGHT, LOOKUP_NODE_UNITS_PER_CALL } from '../core/ranking.limits';
import { optionsCountWeight } from '../options/registry';
import { scoresPerCountCall, shardsPerCountCall } from './node-parts';

type Config = Parameters<typeof shardsPerCountCall>[0];

describe('shardsPerCountCall', () => {
  const boards: Array<[string, Config]> = [
    ['shared ties', {}],
    ['ties: first', { ties: 'first' }],
  ];

  it.each(boards)('keeps a count call of a %s board within LOOKUP_NODE_UNITS_PER_CALL weighted units', (_, config) => {
    for (const scores of [1, 2, 31, 100, 500]) {
      const shards = shardsPerCountCall(config, scores);
      const units = shards * (scores * optionsCountWeight(config) + COUNT_SHARD_WEIGHT);
      expect(shards).toBeGreaterThanOrEqual(1);
      if (shards > 1) expect(units).toBeLessThanOrEqual(LOOKUP_NODE_UNITS_PER_CALL);
    }
  });

  it("weighs a ties: first count and each shard's reads: 31 scores go on 2 shards a call (5 ran 305 commands)", () => {
    expect(shardsPerCountCall(boards[1][1], 31)).toBe(2);
    expect(shardsPerCountCall(boards[0][1], 31)).toBe(5);
  });

  it.each(boards)(
    "keeps a lone shard's count call of a %s board within LOOKUP_NODE_UNITS_PER_CALL units",
    (_, config) => {
      const scores = scoresPerCountCall(config);
      expect(shardsPerCountCall(config, scores)).toBe(1);
      expect(scores * optionsCountWeight(config) + COUNT_SHARD_WEIGHT).toBeLessThanOrEqual(LOOKUP_NODE_UNITS_PER_CALL);
      expect((scores + 1) * optionsCountWeight(config) + COUNT_SHARD_WEIGHT).toBeGreaterThan(
        LOOKUP_NODE_UNITS_PER_CALL,
      );
    },
  );
});
