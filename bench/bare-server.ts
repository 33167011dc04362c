/**
 * The floor: a bare Fastify + ioredis server that runs the SAME Lua scripts as the service for the
 * same routes (ranking, counter increment, stats record), with no Nest, no validation, no metrics,
 * no logging, no stats index. Started by bench/run.ts.
 * Usage: PORT=... REDIS_URL=... KEY_PREFIX=... BOARD=... ts-node bench/bare-server.ts
 */
import Fastify from 'fastify';
import Redis from 'ioredis';
import { AppConfig } from '../src/common/config';
import { CounterKeys } from '../src/counters/counter-keys';
import { COUNTER_SCRIPTS } from '../src/counters/counters.scripts';
import { PreparedBoard } from '../src/ranking/board';
import { RANKING_SCRIPTS as S } from '../src/ranking/ranking.scripts';
import { KeyBuilder } from '../src/redis/keys';
import { nodeOptions } from '../src/redis/redis-options';
import { loadScriptSource, ScriptDefinition } from '../src/redis/scripts';
import { StatsKeys } from '../src/stats/stats-keys';
import { bucketField, hourStartOf } from '../src/stats/stats-math';
import { STATS_SCRIPTS } from '../src/stats/stats.scripts';

const EXPIRE_CHUNK = 1000;

async function main(): Promise<void> {
  // The service's own client options (its defaults): the ratio measures the framework and the
  // features, not a difference in how Redis is talked to.
  const defaults = new AppConfig();
  const redis = new Redis(process.env.REDIS_URL ?? '', {
    ...nodeOptions({
      commandTimeoutMs: defaults.REDIS_COMMAND_TIMEOUT_MS,
      autoPipelining: defaults.REDIS_AUTO_PIPELINING,
    }),
    lazyConnect: true,
  });
  await redis.connect(); // no offline queue: nothing may be sent before the connection is up
  const keys = new KeyBuilder(process.env.KEY_PREFIX ?? 'tb:');
  const run = (script: ScriptDefinition, keyList: string[], args: Array<string | number>) => {
    const command = (redis as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[script.name];
    return script.numberOfKeys === 'dynamic'
      ? command.call(redis, keyList.length, ...keyList, ...args)
      : command.call(redis, ...keyList, ...args);
  };
  for (const script of [...Object.values(S), ...Object.values(COUNTER_SCRIPTS), ...Object.values(STATS_SCRIPTS)]) {
    redis.defineCommand(script.name, {
      lua: loadScriptSource(script),
      numberOfKeys: script.numberOfKeys === 'dynamic' ? undefined : script.numberOfKeys,
    });
  }
  const boardName = process.env.BOARD ?? 'bench';
  const stored = await redis.hgetall(keys.board(boardName).cfg());
  const board = new PreparedBoard(
    { name: boardName, version: stored.version, shards: 1, windows: JSON.parse(stored.windows) },
    (shard) => keys.board(boardName, shard),
  );
  const window = board.config.windows[0];
  const readKeys = [board.keys.cfg(), board.keys.slots(window.name), board.keys.top(window.name)];
  const readArgs = () => [board.config.version, Date.now(), EXPIRE_CHUNK, window.periodSec, window.intervalSec];
  const writeArgs = () => [board.config.version, Date.now(), EXPIRE_CHUNK, ...board.windowArgs];

  const app = Fastify({ logger: false });
  app.post<{ Params: { item: string }; Body?: { amount?: number } }>(
    '/boards/:board/items/:item/increment',
    async (request) => {
      const reply = (await run(S.increment, board.incrementKeys, [
        ...writeArgs(),
        request.params.item,
        request.body?.amount ?? 1,
      ])) as number[];
      return { board: boardName, item: request.params.item, score: reply[1], rank: reply[2] };
    },
  );
  app.post<{ Body: { items: Array<{ item: string; amount?: number }> } }>(
    '/boards/:board/increments',
    async (request) => {
      const pairs = request.body.items.flatMap((e) => [e.item, e.amount ?? 1]);
      const reply = (await run(S.incrementBatch, board.incrementKeys, [...writeArgs(), ...pairs])) as number[];
      return { board: boardName, count: reply[1] };
    },
  );
  app.get<{ Querystring: { limit?: string } }>('/boards/:board/top', async (request) => {
    return { items: await run(S.readTop, readKeys, [...readArgs(), 0, Number(request.query.limit ?? 10)]) };
  });
  app.get<{ Params: { item: string } }>('/boards/:board/items/:item', async (request) => {
    return { item: request.params.item, reply: await run(S.readItem, readKeys, [...readArgs(), request.params.item]) };
  });
  app.get<{ Params: { item: string } }>('/boards/:board/items/:item/around', async (request) => {
    return { items: await run(S.readAround, readKeys, [...readArgs(), request.params.item, 5]) };
  });
  const precisions = defaults.COUNTER_PRECISIONS.split(',').map(Number);
  const counterKeys = new CounterKeys(keys.prefix, defaults.COUNTER_INDEX_BUCKETS);
  app.post<{ Params: { name: string }; Body?: { count?: number } }>('/counters/:name/increment', async (request) => {
    const name = request.params.name;
    const nowMs = Date.now();
    const counterKeyList = [counterKeys.knownOf(name), ...precisions.map((p) => counterKeys.count(name, p))];
    const landed = await run(COUNTER_SCRIPTS.increment, counterKeyList, [
      nowMs,
      defaults.COUNTER_SAMPLES,
      Math.floor(nowMs / 1000),
      request.body?.count ?? 1,
      name,
      ...precisions,
    ]);
    return { name, precisions: landed };
  });
  const statsKeys = new StatsKeys(keys.prefix);
  app.post<{ Params: { context: string; type: string }; Body: { value: number } }>(
    '/stats/:context/:type',
    async (request) => {
      const { context, type } = request.params;
      const nowMs = Date.now();
      const value = request.body.value;
      const reply = await run(
        STATS_SCRIPTS.record,
        [statsKeys.current(context, type), statsKeys.previous(context, type)],
        [nowMs, hourStartOf(nowMs), String(value), bucketField(value)],
      );
      return { context, type, reply };
    },
  );
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  process.send?.('ready');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
