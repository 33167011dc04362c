import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { controversy, wilsonLowerBound } from '../../../src/ranking/options/metrics/metric-formulas';

/** metric_formulas.lua as a script: the module's table, its source, then both formulas of ARGV[1], ARGV[2]. */
const SCRIPT = [
  'local metric_formulas = {}',
  readFileSync(join(__dirname, '../../../src/ranking/options/metrics/metric_formulas.lua'), 'utf8'),
  'local p, n = tonumber(ARGV[1]), tonumber(ARGV[2])',
  "return { string.format('%.17g', metric_formulas.wilson(p, n)), string.format('%.17g', metric_formulas.controversy(p, n)) }",
].join('\n');

describe('the Wilson and controversial formulas in Lua equal the TypeScript ones', () => {
  let redis: TestRedis;
  beforeAll(async () => {
    redis = await startTestRedis('single');
  });
  afterAll(() => redis.stop());

  it('over counts from 0 to a million, within a few units of the last place', async () => {
    const count = fc.oneof(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 1_000_000 }), fc.constant(-3));
    await fc.assert(
      fc.asyncProperty(count, count, async (p, n) => {
        const [wilson, controversial] = (await redis.client.eval(SCRIPT, 0, p, n)) as string[];
        // Same operations in the same order; pow may differ from Math.pow in its last bit.
        expect(Number(wilson)).toBeCloseTo(wilsonLowerBound(p, n), 12);
        const expected = controversy(p, n);
        expect(Math.abs(Number(controversial) - expected)).toBeLessThanOrEqual(expected * 1e-14);
      }),
      { numRuns: 300 },
    );
  });
});
