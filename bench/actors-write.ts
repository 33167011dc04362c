/**
 * What actors add to an increment (issue #26; `BENCH_BASELINE_DIR=<checkout of the previous version>
 * npm run bench -- --part actors-write`, under a minute): the increment's Redis CPU per
 * call on two private redis-servers, one running the baseline's tb_ranking (a checkout given by
 * BENCH_BASELINE_DIR; the two libraries name their functions alike, so they cannot share a server),
 * one this tree's, for an event without an actor and one with an actor on a board with actors (two
 * windows, 5 000 items, 2 000 actors); rounds of 4 000 pipelined calls, interleaved between servers.
 */
import Redis from 'ioredis';
import { AppConfig } from '../src/common/config';
import { UNLIMITED } from '../src/governance/growth-quota';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { RANKING } from '../src/ranking/ranking.functions';
import { loadLibraries } from '../src/redis/functions';
import { callFunction, fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, Pipeline, printVariants, variant } from './call-rounds';
import { startRedisServer } from './process-stats';
const BASELINE_DIR = process.env.BENCH_BASELINE_DIR;
if (!BASELINE_DIR)
  throw new Error('BENCH_BASELINE_DIR: a checkout of the version to compare with (its src/ is loaded)');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const MAIN = require(`${BASELINE_DIR}/src/ranking/ranking.functions`).RANKING as typeof RANKING;
const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
const WINDOWS = [
  { name: 'hour', periodSec: 3600, intervalSec: 300 },
  { name: 'day', periodSec: 86_400, intervalSec: 3600 },
];
/** A library as this bench calls it (the baseline's has the same shape, older arguments aside). */
type Library = typeof RANKING;

async function board(redis: Redis, lib: Library, name: string, nowMs: number, actors: boolean): Promise<PreparedBoard> {
  const keys = new RankingKeys('tb:');
  const reply = await callFunction(redis, lib.functions.boardPut, {
    ...{ keys: keys.board(name), windows: WINDOWS, shards: 1, maxItems: undefined, views: [] },
    ...{ version: `v-${name}`, reset: false, nowMs, ...(actors ? { actors: true } : {}) },
  });
  if (reply.status === 'conflict') throw new Error(reply.message);
  const config = { name, version: reply.version, shards: 1, maxItems: null, views: [], actors };
  return new PreparedBoard({ ...config, windows: JSON.parse(reply.windowsJson) }, () => keys.board(name));
}
/** The `n`th increment's FCALL arguments: item i(n mod 5 000), with an actor if given. */
function incrementArgs(call: { lib: Library; board: PreparedBoard; nowMs: number; n: number; actor?: string }) {
  const { lib, board: b, nowMs, n, actor } = call;
  const base = { board: b, shard: b.shards[0], nowMs, budgetFields: EXPIRE_CHUNK, newItems: UNLIMITED };
  return fcallArgs(
    lib.functions.increment,
    lib.functions.increment.build({ ...base, item: `i${n % 5000}`, amount: 1, ...(actor ? { actor } : {}) }),
  );
}

export async function actorsWriteBench(): Promise<void> {
  const [sa, sb] = [await startRedisServer(), await startRedisServer()];
  const [ra, rb] = [new Redis(sa.url), new Redis(sb.url)];
  await loadLibraries(ra, [MAIN.library]);
  await loadLibraries(rb, [RANKING.library]);
  const nowMs = Date.now();
  const b0 = await board(ra, MAIN, 'main', nowMs, false);
  const b1 = await board(rb, RANKING, 'mine', nowMs, false);
  const b2 = await board(rb, RANKING, 'acted', nowMs, true);
  const args = (lib: Library, b: PreparedBoard, n: number, actor?: string) =>
    incrementArgs({ lib, board: b, nowMs, n, actor });
  const va = [
    variant('baseline, no actor', 'fcall', (p: Pipeline, n) =>
      p.fcall(MAIN.functions.increment.redisName, ...args(MAIN, b0, n)),
    ),
  ];
  const vb = [
    variant('this branch, no actor', 'fcall', (p: Pipeline, n) =>
      p.fcall(RANKING.functions.increment.redisName, ...args(RANKING, b1, n)),
    ),
    variant('this branch, actor', 'fcall', (p: Pipeline, n) =>
      p.fcall(RANKING.functions.increment.redisName, ...args(RANKING, b2, n, `a${n % 2000}`)),
    ),
  ];
  const before = loadAverage();
  for (let turn = 0; turn < 3; turn++) {
    await measure(ra, va, { rounds: 3, calls: 4000, pipelined: 100 });
    await measure(rb, vb, { rounds: 3, calls: 4000, pipelined: 100 });
  }
  console.log(`load ${before} / ${loadAverage()}`);
  printVariants([...va, ...vb]);
  ra.disconnect();
  rb.disconnect();
  await stopChild(sa.child);
  await stopChild(sb.child);
}
