/**
 * An alias merge (issue #49; `npm run bench -- --part aliases`, under a minute), on one
 * private redis-server: an alias with 10 000 events of 2 000 actors over the last hour, on a board of
 * three windows (1 h/1 m, 1 d/1 h, 7 d/1 d) and two views (unique on 1 h, decay on 1 d) that also
 * holds 10 000 events of the canonical item; named an alias (PUT) and run to done in this process.
 * Twice: both ids on one shard (each take gives its chunk in the same call), and on two shards (a take,
 * then its give). Then on one shard of a board of three metrics (no actors: metrics go without them),
 * the same windows, a decay view and a wilson view of two metrics: 10 000 events of the alias spread
 * over the metrics, as many of the canonical item. Figures: the merge's calls, the Redis commands they ran (SLOWLOG at 0 µs: commands a
 * script runs are logged too, a figure the load does not move), the longest call and all calls as
 * Redis timed them, the CPU time Redis and this process spent (what a quiet machine's wall time comes
 * to: the calls run one after another), wall time PUT to done, and whether every window then lists the
 * canonical item with the sum of both.
 */
import Redis from 'ioredis';
import { RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { RedisMeter } from '../harness/worst-case/redis-meter';
import { BatchInput } from '../src/ranking/writes/write-commands';
import { shardOf } from '../src/ranking/core/shard-math';
import { cpuSeconds } from './process-stats';
import { ACTOR_BOARD_VIEWS as VIEWS, ACTOR_BOARD_WINDOWS as WINDOWS, benchOnPrivateRanking } from './private-ranking';

const EVENTS = 10_000;
const ACTORS = 2_000;
const NOW_MS = Date.parse('2026-12-02T12:00:00Z');
const METRICS = ['up', 'down', 'meh'];
const METRIC_VIEWS = [VIEWS[1], { name: 'rated', mode: 'wilson', window: 'hour', positive: 'up', negative: 'down' }];

/** A merge measured: its board, shards and ids, and its metrics (none: the board with actors). */
interface Case {
  label: string;
  board: string;
  shards: number;
  metrics?: string[];
}

/** Two ids on two shards of a 2-shard board (`apart`), or any two (one shard). */
function ids(apart: boolean): { alias: string; item: string } {
  if (!apart) return { alias: 'NodeJS', item: 'nodejs' };
  for (let n = 0; ; n++) {
    const alias = `NodeJS${n}`;
    if (shardOf(alias, 2) !== shardOf('nodejs', 2)) return { alias, item: 'nodejs' };
  }
}

async function seed(graph: RankingGraph, clock: FakeClock, board: string, alias: string, item: string) {
  for (let minute = 0; minute < 60; minute++) {
    clock.setMs(NOW_MS - (59 - minute) * 60_000);
    const entries: BatchInput[] = [];
    for (let k = 0; k < EVENTS / 60; k++) {
      const n = minute * Math.ceil(EVENTS / 60) + k;
      entries.push(
        { item: alias, amount: 1, actor: `u${n % ACTORS}` },
        { item, amount: 2, actor: `u${(n * 7) % ACTORS}` },
      );
    }
    // Batches within WRITE_COST_PER_CALL: an entry with an actor on 3 windows and 2 views weighs 48 units.
    for (let i = 0; i < entries.length; i += 30) await graph.ranking.incrementBatch(board, entries.slice(i, i + 30));
  }
  clock.setMs(NOW_MS);
}

/** The alias's events spread over the metrics, a batch of one metric each, as many of the canonical item. */
async function seedMetrics(graph: RankingGraph, clock: FakeClock, board: string, alias: string, item: string) {
  for (let minute = 0; minute < 60; minute++) {
    clock.setMs(NOW_MS - (59 - minute) * 60_000);
    for (const [m, metric] of METRICS.entries()) {
      const events = Math.ceil(EVENTS / 60 / METRICS.length) + (m === 0 ? 1 : 0);
      const entries = Array.from({ length: events }, () => [
        { item: alias, amount: 1, metric },
        { item, amount: 2, metric },
      ]).flat();
      for (let i = 0; i < entries.length; i += 100)
        await graph.ranking.incrementBatch(board, entries.slice(i, i + 100));
    }
  }
  clock.setMs(NOW_MS);
}

/** Every window's score of `id`, by every metric of the case. */
function scores(graph: RankingGraph, c: Case, id: string): Promise<number[]> {
  const reads = (c.metrics ?? [undefined]).flatMap((metric) =>
    WINDOWS.map((w) => graph.ranking.item(c.board, w.name, id, { metric }).then((row) => row.score)),
  );
  return Promise.all(reads);
}

async function merge(graph: RankingGraph, meter: RedisMeter, clock: FakeClock, c: Case, pid?: number): Promise<string> {
  const { alias, item } = ids(c.shards > 1);
  const { board, shards, metrics } = c;
  if (metrics) {
    await graph.ranking.putBoard({ name: board, windows: WINDOWS, shards, views: METRIC_VIEWS, metrics });
    await seedMetrics(graph, clock, board, alias, item);
  } else {
    await graph.ranking.putBoard({ name: board, windows: WINDOWS, shards, views: VIEWS, actors: true });
    await seed(graph, clock, board, alias, item);
  }
  const [before, aliased] = [await scores(graph, c, item), await scores(graph, c, alias)];
  await meter.reset();
  const started = process.hrtime.bigint();
  const [redisCpu, nodeCpu] = [cpuSeconds(pid), process.cpuUsage()];
  await graph.aliases.put(board, alias, item);
  await graph.aliases.settled(board, alias);
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const redisCpuMs = (cpuSeconds(pid) - redisCpu) * 1000;
  const nodeUsage = process.cpuUsage(nodeCpu);
  const nodeCpuMs = (nodeUsage.user + nodeUsage.system) / 1000;
  const cost = await meter.read();
  const done = await graph.aliases.get(board, alias);
  const after = await scores(graph, c, item);
  const exact = after.every((score, w) => score === before[w] + aliased[w]);
  const commands = Object.values(cost.scriptCommands).reduce((sum, n) => sum + n, 0);
  const steps = cost.calls;
  if (process.env.BENCH_ALIAS_TALLY)
    console.log(
      Object.entries(cost.scriptCommands)
        .sort((a, b) => b[1] - a[1])
        .map(([c, n]) => `${c} ${n}`)
        .join(', '),
    );
  return `| ${c.label} | ${done.state}, ${done.entries} entries | ${steps} | ${commands} (${(commands / Math.max(1, steps)).toFixed(0)} a call) | ${cost.maxCallMs.toFixed(2)} ms | ${cost.totalMs.toFixed(0)} ms | ${redisCpuMs.toFixed(0)} + ${nodeCpuMs.toFixed(0)} ms | ${wallMs.toFixed(0)} ms | ${exact} |`;
}

export const aliasesBench = (): Promise<void> =>
  benchOnPrivateRanking(NOW_MS, async ({ graph, clock, server }) => {
    // A plain client of its own: the service's answers null to SLOWLOG GET as a buffer call.
    const node = new Redis(server.url);
    const meter = new RedisMeter(async () => [node]);
    // BENCH_ALIAS_METER=0: Redis's CPU without the SLOWLOG entry each command costs (calls not counted then).
    if (process.env.BENCH_ALIAS_METER !== '0') await meter.start();
    const lines = [
      '| merge | answer | Redis calls | commands in scripts | longest call | all calls (Redis) | CPU: Redis + this process | wall, PUT to done | exact |',
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |',
      await merge(graph, meter, clock, { label: 'one shard', board: 'one', shards: 1 }, server.child.pid),
      await merge(graph, meter, clock, { label: 'two shards (take, give)', board: 'two', shards: 2 }, server.child.pid),
      await merge(
        graph,
        meter,
        clock,
        { label: 'three metrics, one shard', board: 'three', shards: 1, metrics: METRICS },
        server.child.pid,
      ),
    ];
    await meter.stop();
    node.disconnect();
    await graph.aliases.onApplicationShutdown();
    return lines;
  });
