/**
 * What group boards cost (issue #48; `npm run bench -- --part group-boards`, under a
 * minute): on a private redis-server running this tree's tb_ranking, the increment's Redis time per
 * call on a member board of a group board (every item a member: its group's zset and dirty mark move
 * with it) against the same board without one; rounds of 4 000 pipelined calls, interleaved. Then a
 * group board read at its maxima: GROUP_SETTLE_ROWS / 1 000 + 1 groups of 1 000 members (top 1 000),
 * every group dirty: the settling calls' Redis time (each at most GROUP_SETTLE_ROWS member rows), and
 * the top-1 000 read of the groups that follows. Then, through the composed service, history over a
 * member board of SHARDS shards keeping snapshots (keep 1 000, top 1 000), the same groups on it, all
 * dirty at the next boundary: the group board's history read there (each shard's crossing records its
 * part, group_parts_lib; the settle round merges them on shard 0, group-history.ts), its calls and
 * Redis time, and the bytes of the merged listing's record of counted members.
 */
import Redis from 'ioredis';
import { AppConfig, validateConfig } from '../src/common/config';
import { composeRanking } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { RedisFunctions } from '../src/redis/redis-functions';
import { UNLIMITED } from '../src/governance/growth-quota';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { groupSource } from '../src/ranking/group-boards/group-boards.service';
import { GROUP_SETTLE_ROWS, MAX_RECORDED_MEMBERS_PER_BOARD } from '../src/ranking/options/group-of/group-of.limits';
import { RANKING } from '../src/ranking/ranking.functions';
import { loadLibraries } from '../src/redis/functions';
import { callFunction, fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, Pipeline, printVariants, scriptCallTime, usecPerCall, variant } from './call-rounds';
import { startRedisServer } from './process-stats';

const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
const WINDOWS = [{ name: 'week', periodSec: 7 * 86_400, intervalSec: 86_400 }];
const SHARDS = 64;
const MEMBERS = 1000;
const GROUPS = Math.ceil(GROUP_SETTLE_ROWS / MEMBERS) + 1;
const LIMITS = {
  boards: 8,
  groups: 1000,
  perGroup: MEMBERS,
  members: 100_000,
  recordedMembers: MAX_RECORDED_MEMBERS_PER_BOARD,
};
const SETTING = { board: 'grouped', window: 'week', top: MEMBERS, decay: 0.9 };
const keys = new RankingKeys('tb:');

async function board(redis: Redis, name: string, nowMs: number): Promise<PreparedBoard> {
  const reply = await callFunction(redis, RANKING.functions.boardPut, {
    ...{ keys: keys.board(name), windows: WINDOWS, shards: 1, maxItems: undefined, views: [] },
    ...{ version: `v-${name}`, reset: false, nowMs },
  });
  if (reply.status === 'conflict') throw new Error(reply.message);
  const config = { name, version: reply.version, shards: 1, maxItems: null, views: [] };
  return new PreparedBoard({ ...config, windows: JSON.parse(reply.windowsJson) }, () => keys.board(name));
}

const call = (b: PreparedBoard, nowMs: number) => ({
  board: b,
  shard: b.shards[0],
  nowMs,
  budgetFields: EXPIRE_CHUNK,
  newItems: UNLIMITED,
});

function incrementArgs(b: PreparedBoard, nowMs: number, item: string) {
  return fcallArgs(
    RANKING.functions.increment,
    RANKING.functions.increment.build({ ...call(b, nowMs), item, amount: 1 }),
  );
}

/** GROUPS groups of MEMBERS members each on the member board, every member scored. */
async function fill(redis: Redis, member: PreparedBoard, nowMs: number): Promise<void> {
  const p = redis.pipeline();
  for (let n = 0; n < GROUPS * MEMBERS; n++) {
    const join = {
      ...call(member, nowMs),
      groupBoard: 'teams',
      window: member.window('week')!,
      item: `i${n}`,
      group: `g${n % GROUPS}`,
      rule: `${SETTING.top} ${SETTING.decay}`,
    };
    const built = RANKING.functions.groupMemberSet.build({ ...join, limits: LIMITS });
    p.fcall(RANKING.functions.groupMemberSet.redisName, ...fcallArgs(RANKING.functions.groupMemberSet, built));
    p.fcall(RANKING.functions.increment.redisName, ...incrementArgs(member, nowMs, `i${n}`));
  }
  await p.exec();
}

/** Every group dirty, then settling calls to the end: their count and slowest Redis µs; then the top-1 000 read's µs. */
async function settleAndRead(redis: Redis, member: PreparedBoard, nowMs: number) {
  const p = redis.pipeline();
  for (let g = 0; g < GROUPS; g++)
    p.fcall(RANKING.functions.increment.redisName, ...incrementArgs(member, nowMs, `i${g}`));
  await p.exec();
  const window = member.window('week')!;
  const settle = { ...call(member, nowMs), window, groupBoard: 'teams', top: SETTING.top, decay: SETTING.decay };
  const callUsec: number[] = [];
  for (let draining = true; draining;) {
    await redis.config('RESETSTAT');
    draining = (await callFunction(redis, RANKING.functions.groupSettle, { ...settle, rows: GROUP_SETTLE_ROWS }))
      .draining;
    callUsec.push(await usecPerCall(redis, 'fcall'));
  }
  await redis.config('RESETSTAT');
  const source = groupSource(member, 'teams', window);
  await callFunction(redis, RANKING.functions.readTop, { ...call(source, nowMs), window, offset: 0, limit: 1000 });
  return { calls: callUsec.length, slowestUsec: Math.max(...callUsec), readUsec: await usecPerCall(redis, 'fcall') };
}

/**
 * The history read of a group board over a member board of SHARDS shards (2 groups of MEMBERS members,
 * both dirty at the boundary): its fcall calls and Redis ms, and the merged listing's record bytes.
 */
async function shardedHistory(url: string, admin: Redis): Promise<string> {
  const config = validateConfig({ REDIS_URL: url, KEY_PREFIX: 'bgh:', REDIS_COMMAND_TIMEOUT_MS: '60000' });
  const clock = new FakeClock(Date.UTC(2026, 11, 4));
  const redis = new RedisService(RedisSettings.from(config), clock);
  await redis.waitUntilReady(10_000);
  const { ranking, groupBoards } = await composeRanking(redis, new RedisFunctions(redis), config, clock);
  const snapshots = { keep: 1000, top: 1000 };
  await ranking.putBoard({
    name: 'hm',
    windows: [{ name: 'm', period: 3600, interval: 60, snapshots }],
    shards: SHARDS,
  });
  await ranking.putBoard({ name: 'ht', groupOf: { board: 'hm', window: 'm', top: MEMBERS, decay: 1 } });
  const items = Array.from({ length: 2 * MEMBERS }, (_, n) => ({ item: `h${n}`, amount: 1 + n }));
  for (const [n, { item }] of items.entries()) await groupBoards.setMember({ name: 'ht', group: `g${n % 2}`, item });
  for (let first = 0; first < items.length; first += 1000)
    await ranking.incrementBatch('hm', items.slice(first, first + 1000));
  await ranking.history('ht', undefined, undefined).catch(() => undefined);
  await ranking.incrementBatch('hm', [
    { item: 'h0', amount: 1 },
    { item: 'h1', amount: 1 },
  ]);
  clock.advanceMs(60_000);
  await admin.config('RESETSTAT');
  const listing = await ranking.history('ht', undefined, undefined);
  const { calls, usec } = scriptCallTime(await admin.info('commandstats'));
  const record = (await admin.keys('*%ht:cnt:*'))[0];
  const bytes = record ? await admin.memory('USAGE', record) : 0;
  redis.client.disconnect();
  return `history read at the boundary over ${SHARDS} shards (${listing.items.length} groups): ${calls} calls, ${(usec / 1000).toFixed(2)} ms of Redis; the listing's record ${bytes} B`;
}

export async function groupBoardsBench(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  await loadLibraries(redis, [RANKING.library]);
  const nowMs = Date.now();
  const plain = await board(redis, 'plain', nowMs);
  const grouped = await board(redis, 'grouped', nowMs);
  await fill(redis, grouped, nowMs);
  const send = (b: PreparedBoard) => (p: Pipeline, n: number) =>
    p.fcall(RANKING.functions.increment.redisName, ...incrementArgs(b, nowMs, `i${n % (GROUPS * MEMBERS)}`));
  const variants = [
    variant('increment, plain board', 'fcall', send(plain)),
    variant('increment, member board of a group board', 'fcall', send(grouped)),
  ];
  const before = loadAverage();
  for (let turn = 0; turn < 3; turn++) await measure(redis, variants, { rounds: 3, calls: 4000, pipelined: 100 });
  const read = await settleAndRead(redis, grouped, nowMs);
  const history = await shardedHistory(server.url, redis);
  console.log(`load ${before} / ${loadAverage()}`);
  printVariants(variants);
  console.log(
    `group board read, ${GROUPS} groups of ${MEMBERS} members all dirty: ${read.calls} settling calls (slowest ${(read.slowestUsec / 1000).toFixed(2)} ms of Redis), then top 1 000 in ${(read.readUsec / 1000).toFixed(2)} ms`,
  );
  console.log(history);
  redis.disconnect();
  await stopChild(server.child);
}
