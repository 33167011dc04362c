/**
 * What group boards cost (issue #48; `npx ts-node --transpile-only bench/group-boards.ts`, under a
 * minute): on a private redis-server running this tree's tb_ranking, the increment's Redis time per
 * call on a member board of a group board (every item a member: its group's zset and dirty mark move
 * with it) against the same board without one; rounds of 4 000 pipelined calls, interleaved. Then a
 * group board read at its maxima: GROUP_SETTLE_ROWS / 1 000 + 1 groups of 1 000 members (top 1 000),
 * every group dirty: the settling calls' Redis time (each at most GROUP_SETTLE_ROWS member rows), and
 * the top-1 000 read of the groups that follows. Then history over a member board of SHARDS shards
 * keeping snapshots (keep 1 000, top 1 000), the same groups on it: at the next boundary each shard's
 * crossing records its part of the listing (group_parts_lib), then the merge (group-history.ts):
 * every shard's parts read, the listing stored on shard 0, the parts dropped; calls and Redis time each.
 */
import Redis from 'ioredis';
import { AppConfig } from '../src/common/config';
import { UNLIMITED } from '../src/governance/growth-quota';
import { PreparedBoard } from '../src/ranking/core/board';
import { RankingKeys } from '../src/ranking/core/ranking.keys';
import { groupSource } from '../src/ranking/group-boards/group-boards.service';
import { knownBoundaries, mergedGroups } from '../src/ranking/group-boards/group-history';
import { GROUP_SETTLE_ROWS, MAX_RECORDED_MEMBERS_PER_BOARD } from '../src/ranking/options/group-of/group-of.limits';
import { RANKING } from '../src/ranking/ranking.functions';
import { loadLibraries } from '../src/redis/functions';
import { callFunction, fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, median, Pipeline, scriptCallTime, usecPerCall, variant } from './call-rounds';
import { startRedisServer } from './process-stats';

const EXPIRE_CHUNK = new AppConfig().EXPIRE_CHUNK;
const WINDOWS = [{ name: 'week', periodSec: 7 * 86_400, intervalSec: 86_400 }];
const SHARDS = 64;
const SNAPSHOTS = { keep: 1000, top: 1000 };
const HISTORY_WINDOWS = [{ name: 'week', periodSec: 3600, intervalSec: 60, snapshots: SNAPSHOTS }];
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

async function board(redis: Redis, name: string, nowMs: number, shards = 1): Promise<PreparedBoard> {
  const windows = shards === 1 ? WINDOWS : HISTORY_WINDOWS;
  const reply = await callFunction(redis, RANKING.functions.boardPut, {
    ...{ keys: keys.board(name), windows, shards, maxItems: undefined, views: [] },
    ...{ version: `v-${name}`, reset: false, nowMs },
  });
  if (reply.status === 'conflict') throw new Error(reply.message);
  const config = { name, version: reply.version, shards, maxItems: null, views: [] };
  return new PreparedBoard({ ...config, windows: JSON.parse(reply.windowsJson) }, () => keys.board(name));
}

const call = (b: PreparedBoard, nowMs: number, item?: string) => ({
  board: b,
  shard: item === undefined ? b.shards[0] : b.shardOf(item),
  nowMs,
  budgetFields: EXPIRE_CHUNK,
  newItems: UNLIMITED,
});

function incrementArgs(b: PreparedBoard, nowMs: number, item: string) {
  return fcallArgs(
    RANKING.functions.increment,
    RANKING.functions.increment.build({ ...call(b, nowMs, item), item, amount: 1 }),
  );
}

/** GROUPS groups of MEMBERS members each on the member board, every member scored. */
async function fill(redis: Redis, member: PreparedBoard, nowMs: number): Promise<void> {
  const p = redis.pipeline();
  for (let n = 0; n < GROUPS * MEMBERS; n++) {
    const join = {
      ...call(member, nowMs, `i${n}`),
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

/** The fcall calls and their Redis time (ms) of `run`. */
async function timed(redis: Redis, run: () => Promise<unknown>): Promise<string> {
  await redis.config('RESETSTAT');
  await run();
  const { calls, usec } = scriptCallTime(await redis.info('commandstats'));
  return `${calls} calls, ${(usec / 1000).toFixed(2)} ms of Redis`;
}

/** The sharded member board's next boundary: each shard's crossing (its part recorded), then the merge on shard 0. */
async function shardedHistory(redis: Redis, member: PreparedBoard, nowMs: number): Promise<string[]> {
  const window = member.window('week')!;
  const on = { groupBoard: 'teams', window: 'week' };
  const step = { rule: `${SETTING.top} ${SETTING.decay}`, top: SETTING.top, clears: [], fetches: [], most: 1 };
  const crossed = await timed(redis, () =>
    Promise.all(
      member.shards.map((shard) =>
        callFunction(redis, RANKING.functions.groupShardStep, {
          ...call(member, nowMs),
          shard,
          window,
          groupBoard: 'teams',
          step,
        }),
      ),
    ),
  );
  const parts = await Promise.all(
    member.shards.map((shard) =>
      callFunction(redis, RANKING.functions.groupHistoryParts, { ...on, shard: shard.keys, upto: null }),
    ),
  );
  const rule = { top: SETTING.top, decay: SETTING.decay, ascending: false, listed: SNAPSHOTS.top };
  const atSec = knownBoundaries(parts, false)[0];
  const groups = mergedGroups(parts, atSec, rule);
  const listing = { ...on, shard: member.shards[0].keys, nowMs, atSec, intervalSec: 60, ...SNAPSHOTS };
  const sizes = { rule: step.rule, room: Math.floor(MAX_RECORDED_MEMBERS_PER_BOARD / (SNAPSHOTS.keep + 2)), boards: 8 };
  const stored = await timed(redis, () =>
    callFunction(redis, RANKING.functions.groupHistoryStore, { ...listing, ...sizes, groups }),
  );
  const bytes = await redis.memory('USAGE', `${member.shards[0].keys.tag}:week%teams:cnt:${atSec}`);
  const dropped = await timed(redis, () =>
    Promise.all(
      member.shards.map((shard) =>
        callFunction(redis, RANKING.functions.groupHistoryParts, { ...on, shard: shard.keys, upto: atSec }),
      ),
    ),
  );
  return [
    `crossing with parts ${crossed}`,
    `merged listing stored ${stored} (its record ${bytes} B)`,
    `parts dropped ${dropped}`,
  ];
}

async function main(): Promise<void> {
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
  const sharded = await board(redis, 'sharded', nowMs, SHARDS);
  await fill(redis, sharded, nowMs);
  const history = await shardedHistory(redis, sharded, nowMs + 60_000);
  console.log(`load ${before} / ${loadAverage()}`);
  for (const v of variants)
    console.log(`${v.name}: ${median(v.rounds).toFixed(1)} µs commandstats, ${median(v.cpu).toFixed(1)} CPU µs`);
  console.log(
    `group board read, ${GROUPS} groups of ${MEMBERS} members all dirty: ${read.calls} settling calls (slowest ${(read.slowestUsec / 1000).toFixed(2)} ms of Redis), then top 1 000 in ${(read.readUsec / 1000).toFixed(2)} ms`,
  );
  console.log(`history over ${SHARDS} shards, ${GROUPS} groups of ${MEMBERS} members: ${history.join('; ')}`);
  redis.disconnect();
  await stopChild(server.child);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
