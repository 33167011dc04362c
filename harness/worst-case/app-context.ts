/**
 * The harness's context over two apps on one Redis and one clock: the measured app, whose quotas are
 * set low so that growth shows as a refusal, and a seeder app whose quotas are out of reach. Requests
 * to the measured app go over real sockets (fetch), as a client's would; the seeder's are injected.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import { CountersScheduler } from '../../src/counters/counters.scheduler';
import { BoardCache } from '../../src/ranking/boards/board-cache';
import { RankingScheduler } from '../../src/ranking/expiry/ranking.scheduler';
import { RankingKeys } from '../../src/ranking/core/ranking.keys';
import { BoardsStore } from '../../src/ranking/boards/boards.store';
import { WritesStore } from '../../src/ranking/writes/writes.store';
import { RedisFunctions } from '../../src/redis/redis-functions';
import { RedisService } from '../../src/redis/redis.service';
import { StatsIndexScheduler } from '../../src/stats/stats.scheduler';
import { AccessTimeRecorder } from '../../src/stats/access-time.recorder';
import { IngestService } from '../../src/ingest/ingest.service';
import { ADMIN_TOKEN } from '../app';
import { prefixedKeys } from '../redis';
import type { FakeClock } from '../clock';
import { SIZES, type Scale } from './boards';
import { ActorWeightsService } from '../../src/ranking/actor-weights/actor-weights.service';
import { AliasesService } from '../../src/ranking/aliases/aliases.service';
import { RetractionService } from '../../src/ranking/retraction/retraction.service';
import type { Caller, HarnessContext, HarnessJob, HttpAnswer, HttpRequest } from './harness-types';
import { stagingStops } from './stopped-reads';

export const CLIENT_SECRET = 'worst-case-client-0123456789';
export const SEEDER_SECRET = 'worst-case-seeder-0123456789';
/** Both apps' keys (appContext takes their timers over: the access-time flush, the ingest and key refreshes, the jobs). */
export const HARNESS_ENV = {
  API_KEYS: `${CLIENT_SECRET}:read+write,${SEEDER_SECRET}:read+write`,
};

/** The measured app's quotas: a growing route meets its refusal within the row's attempts. */
export const LOW_QUOTAS = {
  QUOTA_NEW_ITEMS: '20',
  QUOTA_NEW_LIKE_USERS: '20',
  QUOTA_NEW_COUNTERS: '20',
  QUOTA_NEW_STATS_PAIRS: '20',
  QUOTA_IDEMPOTENT_ANSWERS: '20',
  QUOTA_NEW_ACTOR_ENTRIES: '2000',
  // A segment new on a shard weighs its keys too (2 x 8 windows + 4 x 8 views): room for the 20
  // writes the items quota stops, so the batch row after them is still measured.
  QUOTA_NEW_SEGMENT_ENTRIES: '12000',
  QUOTA_ITEM_DATA_BYTES: '50000',
};
/**
 * The seeder's: out of reach of the largest scale, and calls of a whole seeding batch (a batch of the
 * board of every option holds Redis for about 0.6 s at load 1, more on a loaded machine: not measured).
 */
export const SEEDER_QUOTAS = {
  WRITE_COST_PER_CALL: '1000000',
  REDIS_COMMAND_TIMEOUT_MS: '10000',
  QUOTA_NEW_ITEMS: '100000000',
  QUOTA_NEW_LIKE_USERS: '100000000',
  QUOTA_NEW_COUNTERS: '100000',
  QUOTA_NEW_STATS_PAIRS: '100000',
  QUOTA_IDEMPOTENT_ANSWERS: '100000000',
  QUOTA_NEW_ACTOR_ENTRIES: '100000000',
  QUOTA_NEW_SEGMENT_ENTRIES: '100000000',
  QUOTA_ITEM_DATA_BYTES: '1000000000',
};

const STREAM_FIRST_EVENT_MS = 10_000;

const urlOf = (app: NestFastifyApplication) =>
  `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;

async function answerOf(response: Response): Promise<HttpAnswer> {
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json');
  return { status: response.status, body: json && text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

async function firstEvent(url: string, secret: string): Promise<number> {
  const aborter = new AbortController();
  const timer = setTimeout(() => aborter.abort(), STREAM_FIRST_EVENT_MS);
  try {
    const response = await fetch(url, { headers: { authorization: `Bearer ${secret}` }, signal: aborter.signal });
    if (response.ok) await response.body?.getReader().read();
    return response.status;
  } finally {
    clearTimeout(timer);
    aborter.abort();
  }
}

/**
 * A request to the seeder's instance, injected (Fastify's inject: no socket, no HTTP client): it fills
 * boards with thousands of requests, and what the harness measures is Redis's time, which the way a
 * request arrives does not change.
 */
async function injected(
  app: NestFastifyApplication,
  request: HttpRequest,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<HttpAnswer> {
  const response = await app
    .getHttpAdapter()
    .getInstance()
    .inject({ method: request.method, url: request.path, headers, body });
  const json = String(response.headers['content-type'] ?? '').includes('json');
  return {
    status: response.statusCode,
    body: json && response.body ? (JSON.parse(response.body) as Record<string, unknown>) : undefined,
  };
}

/** Sends as an instance that stops after an unlike's first take-back call: its next calls fail (a 500). */
async function stopping(takeBacks: WritesStore['takeBacks'], send: () => Promise<HttpAnswer>): Promise<HttpAnswer> {
  takeBacks.finish = () => Promise.reject(new Error('the instance stopped'));
  try {
    return await send();
  } finally {
    Reflect.deleteProperty(takeBacks, 'finish');
  }
}

/** The measured instance's job `job`: its pass, as the job's interval runs it (tick); whether it ran without a failure. */
async function runJob(app: NestFastifyApplication, job: HarnessJob): Promise<boolean> {
  const scheduler = { ranking: RankingScheduler, counters: CountersScheduler, stats: StatsIndexScheduler }[job];
  const instance = app.get<RankingScheduler | CountersScheduler | StatsIndexScheduler>(scheduler);
  const failures = instance.stats.failures;
  const result = await instance.tick();
  return result !== undefined && instance.stats.failures === failures;
}

/**
 * Takes out both apps' timers: every interval of their SchedulerRegistry (the key refresh, any
 * scheduled job's), the access-time flush and the ingest refresh (each its service's own timer): a
 * real timer firing inside a row would add its calls to the row's. Answers the flush of both apps'
 * access times, which the harness runs between rows instead (a job's pass: runJob; a source's
 * declaration or delete refreshes ingest itself).
 */
function timersTakenOver(apps: NestFastifyApplication[]): () => Promise<void> {
  for (const app of apps) {
    const registry = app.get(SchedulerRegistry);
    for (const name of registry.getIntervals()) registry.deleteInterval(name);
    app.get(AccessTimeRecorder).takeOverFlushes();
    app.get(IngestService).takeOverRefreshes();
  }
  return async () => {
    await Promise.all(apps.map((app) => app.get(AccessTimeRecorder).flush()));
  };
}

const RUN_SERVICES = { retraction: RetractionService, weighing: ActorWeightsService, merge: AliasesService };

/** The instance a caller's requests reach: the seeder's for the seeder and the operator, else the measured one. */
const onSeeder = (caller: Caller) => caller === 'seeder' || caller === 'operator';

/** Notes the Redis name of every function `app` calls or queues on a pipeline, as it sends it. */
function functionsCalledBy(app: NestFastifyApplication): Set<string> {
  const functions = app.get(RedisFunctions);
  const called = new Set<string>();
  const call = functions.call.bind(functions);
  const queue = functions.queue.bind(functions);
  functions.call = (fn, input) => {
    called.add(fn.redisName);
    return call(fn, input);
  };
  functions.queue = (pipeline, fn, input) => {
    called.add(fn.redisName);
    queue(pipeline, fn, input);
  };
  return called;
}

/** Redis' clock passing the expiries of `app`'s keys matching `patterns`: the keys with one go. */
async function expireOnRedis(app: NestFastifyApplication, patterns: readonly string[]): Promise<void> {
  const { client, prefix } = app.get(RedisService);
  for (const node of 'nodes' in client ? client.nodes('master') : [client])
    for (const pattern of patterns)
      for (const key of await prefixedKeys(node, prefix, pattern))
        if ((await node.pttl(key)) >= 0) await node.unlink(key);
}

/**
 * One SCAN step over `match` (ARGV: cursor, match, the source's tag up to its shard, the target's), each
 * key found copied by Redis under the target's tag: no key or value crosses to this process. A shard's
 * config keeps the target's own declaration stamps (its version, unique per board PUT, the options
 * stamped with it, its revision): what the target's writes would have left, as its instances cached it.
 */
const COPY_STEP = `
local found = redis.call('SCAN', ARGV[1], 'MATCH', ARGV[2], 'COUNT', 10000)
for _, key in ipairs(found[2]) do
  if string.sub(key, 1, #ARGV[3]) ~= ARGV[3] then return redis.error_reply('a key outside the tags: ' .. key) end
  local target = ARGV[4] .. string.sub(key, #ARGV[3] + 1)
  local stamps = string.sub(key, -4) == ':cfg' and redis.call('HMGET', target, 'version', 'options', 'revision')
  redis.call('COPY', key, target, 'REPLACE')
  if stamps then
    for i, field in ipairs({ 'version', 'options', 'revision' }) do
      if stamps[i] then redis.call('HSET', target, field, stamps[i]) else redis.call('HDEL', target, field) end
    end
  end
end
return found[1]`;

/**
 * Every key of board `from` (each shard's tag, its config and snapshots too) copied by Redis under board
 * `to`'s tags, and `from`'s due-index entry given to `to`. One node only: COPY does not cross slots.
 */
async function copyBoard(client: Redis, prefix: string, from: string, to: string): Promise<void> {
  const keys = new RankingKeys(prefix);
  // A shard's tag less its closing brace: `{<prefix>board:<name>`, then `}` (shard 0) or `/<k>}`.
  const [source, target] = [keys.board(from).tag, keys.board(to).tag].map((tag) => tag.slice(0, -1));
  for (const match of [`${source}}*`, `${source}/*`]) {
    let cursor = '0';
    do cursor = String(await client.eval(COPY_STEP, 0, cursor, match, source, target));
    while (cursor !== '0');
  }
  const due = await client.zscore(keys.dueIndex(), from);
  if (due === null) await client.zrem(keys.dueIndex(), to);
  else await client.zadd(keys.dueIndex(), due, to);
}

export function appContext(
  apps: { measured: NestFastifyApplication; seeder: NestFastifyApplication },
  clock: FakeClock,
  scale: Scale,
): HarnessContext {
  const takeBacks = () => apps.measured.get(WritesStore).takeBacks;
  const { client, prefix } = apps.seeder.get(RedisService);
  const send = async (request: HttpRequest, caller: Caller = 'client'): Promise<HttpAnswer> => {
    if (caller === 'stopping') return stopping(takeBacks(), () => send(request));
    if (caller === 'staging stops') return stagingStops(apps.measured, () => send(request));
    const secret = { client: CLIENT_SECRET, seeder: SEEDER_SECRET, admin: ADMIN_TOKEN, operator: ADMIN_TOKEN }[caller];
    const hasBody = request.body !== undefined || request.method === 'POST' || request.method === 'PUT';
    const headers = {
      authorization: `Bearer ${secret}`,
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
      ...request.headers,
    };
    const body = hasBody ? JSON.stringify(request.body ?? {}) : undefined;
    if (onSeeder(caller)) return injected(apps.seeder, request, headers, body);
    const response = await fetch(`${urlOf(apps.measured)}${request.path}`, { method: request.method, headers, body });
    return answerOf(response);
  };
  return {
    ...{ scale, sizes: SIZES[scale], send, statsFlushed: timersTakenOver([apps.measured, apps.seeder]) },
    openStream: (path) => firstEvent(`${urlOf(apps.measured)}${path}`, CLIENT_SECRET),
    nowSec: () => Math.floor(clock.nowMs() / 1000),
    advanceSec: async (seconds) => clock.advanceSec(seconds),
    expireOnRedis: (patterns) => expireOnRedis(apps.measured, patterns),
    sweepTakeBacks: async (board) => takeBacks().sweep(await apps.measured.get(BoardCache).get(board), clock.nowMs()),
    copyBoard: 'nodes' in client ? undefined : (from, to) => copyBoard(client, prefix, from, to),
    dropsSettled: () => apps.measured.get(BoardsStore).drops.settled(),
    runJob: (job) => runJob(apps.measured, job),
    runSettled: (run, board, key, caller) =>
      (onSeeder(caller) ? apps.seeder : apps.measured).get(RUN_SERVICES[run]).settled(board, key),
    functionsCalled: functionsCalledBy(apps.measured),
    state: new Map(),
  };
}
