/**
 * The standing worst-case harness on a Cluster, small (issue #45): the rows whose Redis calls on a
 * Cluster are not a single node's (WorstRow.cluster: harness/worst-case/cluster-rows.ts), on the
 * worker's three-master Cluster, on the boards they read seeded as those rows need, held to the bounds
 * of worst-case.e2e-spec.ts (each call's commands within the row's most, its time, growth within a
 * quota); and every Redis function only a Cluster runs (FUNCTIONS_ON_CLUSTER) run by one of them. The
 * single-node file runs every row, but a sharded lookup's second round (lookup_count_shards) runs only
 * where several nodes serve the shards.
 */
import type { Cluster } from 'ioredis';
import { appContext, HARNESS_ENV, LOW_QUOTAS, SEEDER_QUOTAS } from '../../harness/worst-case/app-context';
import { CLUSTER_ROWS, seedClusterBoards } from '../../harness/worst-case/cluster-rows';
import { FUNCTIONS_ON_CLUSTER, FUNCTIONS_WITHOUT_ROWS, handlerOf } from '../../harness/worst-case/coverage';
import { rowFaults, runWorstCase, worstCaseTable } from '../../harness/worst-case/harness';
import { RedisMeter } from '../../harness/worst-case/redis-meter';
import { useClusterApp } from '../support/e2e';

const BOUNDS = {
  callMs: Number(process.env.WORST_CALL_MS ?? 50),
  requestMs: Number(process.env.WORST_REQUEST_MS ?? 250),
};

describe('the worst-case harness on a Cluster', () => {
  // The worker's Cluster: it runs one file at a time, so its SLOWLOG and used_memory are this file's.
  const e2e = useClusterApp({ env: { ...HARNESS_ENV, ...LOW_QUOTAS }, others: { seeder: SEEDER_QUOTAS } });

  it('lists no function both as only a Cluster runs and as run by no row', () => {
    expect(Object.keys(FUNCTIONS_ON_CLUSTER).filter((handler) => handler in FUNCTIONS_WITHOUT_ROWS)).toEqual([]);
  });

  it('runs every row whose calls differ on a Cluster within its bounds, and each function only a Cluster runs', async () => {
    const cluster = e2e.redis().client as Cluster;
    const meter = new RedisMeter(async () => cluster.nodes('master'));
    const context = appContext({ measured: e2e.app(), seeder: e2e.other('seeder') }, e2e.clock, 'ci');
    await seedClusterBoards(context, meter);
    context.functionsCalled.clear();
    await meter.start();
    try {
      const figures = await runWorstCase(context, meter, CLUSTER_ROWS, BOUNDS);
      console.log(worstCaseTable(figures));
      const faults = figures.flatMap((row, n) =>
        rowFaults(CLUSTER_ROWS[n], row, BOUNDS).map((fault) => `${row.route} (${row.worst}): ${fault}`),
      );
      expect(faults).toEqual([]);
      const run = new Set([...meter.functionsRun, ...context.functionsCalled].map(handlerOf));
      expect(Object.keys(FUNCTIONS_ON_CLUSTER).filter((handler) => !run.has(handler))).toEqual([]);
    } finally {
      await meter.stop();
    }
  }, 180_000);
});
