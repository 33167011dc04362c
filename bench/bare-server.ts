/**
 * The floor: a bare Fastify + ioredis server that runs the SAME Lua scripts as the service for the
 * same routes (ranking, counter increment, stats record), with no Nest, no validation, no metrics,
 * no logging, no stats index; and `POST /minimal/:item/increment` and `GET /minimal/top`, the hand-rolled
 * one-window script and top-N read a team writes instead (bench/minimal-increment.lua, one ZREVRANGE). Started by startBareServer (bench/process-stats.ts).
 * Usage: PORT=... REDIS_URL=... KEY_PREFIX=... BOARD=... ts-node bench/bare-server.ts
 */
import Fastify, { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { AppConfig } from '../src/common/config';
import { UNLIMITED } from '../src/governance/growth-quota';
import { CounterKeys } from '../src/counters/counter-keys';
import { COUNTERS } from '../src/counters/counters.functions';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { BoardCall } from '../src/ranking/core/script-call';
import { RANKING } from '../src/ranking/ranking.functions';
import { nodeOptions } from '../src/redis/redis-options';
import { loadLibraries } from '../src/redis/functions';
import { callFunction } from '../src/redis/redis-functions';
import { StatsKeys } from '../src/stats/stats-keys';
import { bucketField, hourStartOf } from '../src/stats/stats-math';
import { STATS } from '../src/stats/stats.functions';
import { storedBoard } from './plain-boards';

const S = RANKING.functions;

const EXPIRE_CHUNK = 1000;

/**
 * A client with the service's own options (its defaults): the ratio measures the framework and the
 * features, not a difference in how Redis is talked to.
 */
async function connect(defaults: AppConfig): Promise<Redis> {
  const redis = new Redis(process.env.REDIS_URL ?? '', {
    ...nodeOptions({
      commandTimeoutMs: defaults.REDIS_COMMAND_TIMEOUT_MS,
      autoPipelining: defaults.REDIS_AUTO_PIPELINING,
      reconnectMaxMs: defaults.REDIS_RECONNECT_MAX_MS,
    }),
    lazyConnect: true,
  });
  await redis.connect(); // no offline queue: nothing may be sent before the connection is up
  return redis;
}

/** The routes of one board: increment, batch, top, item and around, on the board's first window. */
function boardRoutes(app: FastifyInstance, floor: { redis: Redis; board: PreparedBoard }): void {
  const { redis, board } = floor;
  const boardName = board.config.name;
  const window = board.config.windows[0];
  // No quotas here: the floor the service's own checks are measured against.
  const on = (): BoardCall & { newItems: number } => ({
    board,
    shard: board.shards[0],
    nowMs: Date.now(),
    budgetFields: EXPIRE_CHUNK,
    newItems: UNLIMITED,
  });
  app.post<{ Params: { item: string }; Body?: { amount?: number } }>(
    '/boards/:board/items/:item/increment',
    async (request) => {
      const reply = await callFunction(redis, S.increment, {
        ...on(),
        item: request.params.item,
        amount: request.body?.amount ?? 1,
      });
      return { board: boardName, item: request.params.item, ...reply.value.standings[0] };
    },
  );
  app.post<{ Body: { items: Array<{ item: string; amount?: number }> } }>(
    '/boards/:board/increments',
    async (request) => {
      const entries = request.body.items.map((e) => ({ item: e.item, amount: e.amount ?? 1 }));
      const reply = await callFunction(redis, S.incrementBatch, { ...on(), entries });
      return { board: boardName, count: reply.value.applied };
    },
  );
  readRoutes(app, { redis, on, window });
}

/** The board's reads: top, item and around. */
function readRoutes(
  app: FastifyInstance,
  floor: { redis: Redis; on: () => BoardCall; window: PreparedBoard['config']['windows'][number] },
): void {
  const { redis, on, window } = floor;
  app.get<{ Querystring: { limit?: string } }>('/boards/:board/top', async (request) => {
    const limit = Number(request.query.limit ?? 10);
    return { items: (await callFunction(redis, S.readTop, { ...on(), window, offset: 0, limit })).rows };
  });
  app.get<{ Params: { item: string } }>('/boards/:board/items/:item', async (request) => {
    const item = request.params.item;
    return { item, ...(await callFunction(redis, S.readItem, { ...on(), window, item })).standing };
  });
  app.get<{ Params: { item: string } }>('/boards/:board/items/:item/around', async (request) => {
    const item = request.params.item;
    return { items: (await callFunction(redis, S.readAround, { ...on(), window, item, radius: 5 })).rows };
  });
}

/** The counter increment and the stats record, with the service's default settings. */
function counterAndStatsRoutes(
  app: FastifyInstance,
  floor: { redis: Redis; prefix: string; defaults: AppConfig },
): void {
  const { redis, prefix, defaults } = floor;
  const precisions = defaults.COUNTER_PRECISIONS.split(',').map(Number);
  const counterKeys = new CounterKeys(prefix, defaults.COUNTER_INDEX_BUCKETS);
  app.post<{ Params: { name: string }; Body?: { count?: number } }>('/counters/:name/increment', async (request) => {
    const name = request.params.name;
    const nowMs = Date.now();
    const landed = await callFunction(redis, COUNTERS.functions.increment, {
      keys: counterKeys,
      name,
      precisionsSec: precisions,
      samples: defaults.COUNTER_SAMPLES,
      newCounters: UNLIMITED,
      bucketCap: 0,
      nowMs,
      atSec: Math.floor(nowMs / 1000),
      count: request.body?.count ?? 1,
    });
    return { name, precisions: landed };
  });
  statsRoute(app, { redis, prefix });
}

function statsRoute(app: FastifyInstance, floor: { redis: Redis; prefix: string }): void {
  const { redis, prefix } = floor;
  const statsKeys = new StatsKeys(prefix);
  app.post<{ Params: { context: string; type: string }; Body: { value: number } }>(
    '/stats/:context/:type',
    async (request) => {
      const { context, type } = request.params;
      const nowMs = Date.now();
      const value = request.body.value;
      const reply = await callFunction(redis, STATS.functions.record, {
        keys: statsKeys,
        context,
        type,
        nowMs,
        hourStart: hourStartOf(nowMs),
        value,
        histogramField: bucketField(value),
        apply: true,
      });
      return { context, type, ...reply.value };
    },
  );
}

/** The hand-rolled one-window increment (bench/minimal-increment.lua) and its top-N read. */
async function minimalRoutes(app: FastifyInstance, floor: { redis: Redis; prefix: string }): Promise<void> {
  const { redis, prefix } = floor;
  const minimalSha = String(await redis.script('LOAD', readFileSync(join(__dirname, 'minimal-increment.lua'), 'utf8')));
  app.post<{ Params: { item: string }; Body?: { amount?: number } }>('/minimal/:item/increment', async (request) => {
    const hourStartSec = Math.floor(Date.now() / 3_600_000) * 3600;
    const reply = await redis.evalsha(
      minimalSha,
      2,
      `{${prefix}minimal}:slot:${hourStartSec}`,
      `{${prefix}minimal}:top`,
      request.params.item,
      request.body?.amount ?? 1,
    );
    if (!Array.isArray(reply)) throw new Error('minimal-increment.lua answers { score, rank }');
    return { item: request.params.item, score: Number(reply[0]), rank: Number(reply[1]) };
  });
  // The hand-rolled top-N that goes with it: one ZREVRANGE ... WITHSCORES of the results zset.
  app.get<{ Querystring: { limit?: string } }>('/minimal/top', async (request) => {
    const flat = await redis.zrevrange(
      `{${prefix}minimal}:top`,
      0,
      Number(request.query.limit ?? 10) - 1,
      'WITHSCORES',
    );
    const items: Array<{ item: string; score: number }> = [];
    for (let i = 0; i < flat.length; i += 2) items.push({ item: flat[i], score: Number(flat[i + 1]) });
    return { items };
  });
}

async function main(): Promise<void> {
  const defaults = new AppConfig();
  const redis = await connect(defaults);
  const keys = new RankingKeys(process.env.KEY_PREFIX ?? 'tb:');
  await loadLibraries(redis, [RANKING.library, COUNTERS.library, STATS.library]);
  const board = await storedBoard(redis, keys, process.env.BOARD ?? 'bench');
  const app = Fastify({ logger: false });
  boardRoutes(app, { redis, board });
  counterAndStatsRoutes(app, { redis, prefix: keys.prefix, defaults });
  await minimalRoutes(app, { redis, prefix: keys.prefix });
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  // A graceful exit on SIGTERM, so that `node --cpu-prof` writes its profile (bench/profile.ts).
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
  process.send?.('ready');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
