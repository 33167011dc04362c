import { LOOKUP_COUNTS_PER_CALL } from '../core/ranking.limits';
import { optionsCountWeight } from '../options/registry';
import { shardsPerCountCall } from './lookup.store';

type Config = Parameters<typeof shardsPerCountCall>[0];

describe('shardsPerCountCall', () => {
  const boards: Array<[string, Config]> = [
    ['shared ties', {}],
    ['ties: first', { ties: 'first' }],
  ];

  it.each(boards)('keeps a count call of a %s board within LOOKUP_COUNTS_PER_CALL weighted counts', (_, config) => {
    for (const scores of [1, 2, 31, 100, 500]) {
      const shards = shardsPerCountCall(config, scores);
      expect(shards).toBeGreaterThanOrEqual(1);
      if (shards > 1) expect(shards * scores * optionsCountWeight(config)).toBeLessThanOrEqual(LOOKUP_COUNTS_PER_CALL);
    }
  });

  it('weighs a ties: first count: 31 scores go on 5 shards a call, not 16 (one call of ~27 M instructions)', () => {
    expect(shardsPerCountCall(boards[1][1], 31)).toBe(5);
    expect(shardsPerCountCall(boards[0][1], 31)).toBe(16);
  });
});
