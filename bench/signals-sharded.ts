/**
 * Signals on sharded boards of a Redis Cluster (`npm run bench -- --part signals`;
 * BENCH_SKIP=signals leaves it out of `npm run bench`): a private Cluster of 3 masters, boards of
 * SIGNAL_SHARDS shards (a 1 h / 5 m window) written through the ranking service, 64 increments in
 * flight over 10 000 items, interleaved run by run:
 * - plain: the baseline;
 * - metrics up and down with a wilson and a controversial view (the increments count `up`, which both read);
 * - actors with `capPerItem: 3` (each increment names one of 1 000 actors).
 * Per board: increments/s, the ratio to the plain board (median of paired runs), Redis CPU per write
 * (INFO commandstats of every master, all FCALLs), and Redis CPU per top-10 read of the board's ranked
 * source (the wilson view; the window elsewhere), a read of every shard.
 */
import Redis from 'ioredis';
import { SystemClock } from '../src/common/clock';
import { validateConfig } from '../src/common/config';
import { composeRanking } from '../harness/compose-ranking';
import { startRedisCluster } from '../harness/cluster';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import { fmt, median, throughput } from './load';

const SHARDS = Number(process.env.SIGNAL_SHARDS ?? 8);
const WINDOWS = [{ name: 'hour', period: '1h', interval: '5m' }];
const VOTES = { window: 'hour', positive: 'up', negative: 'down' };
const READS = 200;

interface Signal {
  name: string;
  said: string;
  board: object;
  /** The source a top-10 read ranks by. */
  source: string;
  /** The write's own fields (an actor, a metric). */
  fields: (n: number) => { actor?: string; metric?: string };
}

const SIGNALS: Signal[] = [
  { name: 'plain', said: 'plain', board: {}, source: 'hour', fields: () => ({}) },
  {
    name: 'votes',
    said: 'metrics up and down, a wilson and a controversial view',
    board: {
      metrics: ['up', 'down'],
      views: [
        { name: 'best', mode: 'wilson', ...VOTES },
        { name: 'argued', mode: 'controversial', ...VOTES },
      ],
    },
    source: 'best',
    fields: () => ({ metric: 'up' }),
  },
  {
    name: 'capped',
    said: 'actors, capPerItem 3 (1 000 actors)',
    board: { actors: { capPerItem: 3 } },
    source: 'hour',
    fields: (n) => ({ actor: `u${n % 1000}` }),
  },
];

type Figures = { perSec: number; writeMicros: number; readMicros: number };

export async function signalsShardedBench(repeats: number, durationSec: number): Promise<void> {
  const cluster = await startRedisCluster([], { masters: 3 });
  try {
    await measure(cluster.nodes, repeats, durationSec);
  } finally {
    await cluster.stopServer();
  }
}

async function measure(nodes: string, repeats: number, durationSec: number): Promise<void> {
  const clock = new SystemClock();
  const config = validateConfig({ REDIS_CLUSTER_NODES: nodes, KEY_PREFIX: 'bsig:', REDIS_COMMAND_TIMEOUT_MS: '60000' });
  const redis = new RedisService(RedisSettings.from(config), clock);
  await redis.waitUntilReady(10_000);
  const { ranking } = await composeRanking(redis, new RedisFunctions(redis), config, clock);
  const commands = new WriteCommands(clock);
  const masters = nodes.split(',').map((node) => new Redis(`redis://${node}`));
  const fcallMicros = async (run: () => Promise<unknown>): Promise<number> => {
    await Promise.all(masters.map((m) => m.config('RESETSTAT')));
    await run();
    const stats = await Promise.all(masters.map((m) => m.info('commandstats')));
    const matches = stats.flatMap((s) => [...s.matchAll(/cmdstat_fcall(?:_ro)?:calls=(\d+),usec=(\d+)/g)]);
    return matches.reduce((sum, m) => sum + Number(m[2]), 0);
  };
  for (const signal of SIGNALS)
    await ranking.putBoard({ name: signal.name, windows: WINDOWS, shards: SHARDS, reset: true, ...signal.board });
  const runs = new Map<string, Figures[]>(SIGNALS.map((s) => [s.name, []]));
  for (let repeat = 0; repeat < repeats; repeat++)
    for (const signal of SIGNALS) {
      let n = 0;
      let perSec = 0;
      const write = await fcallMicros(async () => {
        perSec = await throughput(() => {
          const i = n++;
          const item = `i${(i * 7919) % 10_000}`;
          return ranking.increment(commands.increment({ board: signal.name, item, amount: 1, ...signal.fields(i) }));
        }, durationSec);
      });
      const read = await fcallMicros(async () => {
        for (let r = 0; r < READS; r++) await ranking.top(signal.name, signal.source, 0, 10);
      });
      runs.get(signal.name)!.push({ perSec, writeMicros: write / n, readMicros: read / READS });
    }
  report(runs, durationSec);
  for (const signal of SIGNALS) await ranking.deleteBoard(signal.name);
  await Promise.all(masters.map((m) => m.quit()));
  await redis.onApplicationShutdown();
}

function report(runs: Map<string, Figures[]>, durationSec: number): void {
  console.log(
    `## Signals on ${SHARDS}-shard boards of a 3-master Cluster (64 increments in flight, ${durationSec} s runs)\n`,
  );
  console.log('| board | increments/s | vs plain | Redis µs per write | Redis µs per top-10 read |');
  console.log('|---|---|---|---|---|');
  const plain = runs.get('plain')!;
  for (const signal of SIGNALS) {
    const own = runs.get(signal.name)!;
    const ratio = median(own.map((run, i) => run.perSec / plain[i].perSec));
    const at = (figure: (f: Figures) => number) => median(own.map(figure)).toFixed(1);
    console.log(
      `| ${signal.said} | ${fmt(median(own.map((r) => r.perSec)))} | ${ratio.toFixed(2)} | ${at((f) => f.writeMicros)} | ${at((f) => f.readMicros)} |`,
    );
  }
  console.log('');
}
