/**
 * The Lua a board write runs per event (issues #24, #27), in one private redis-server
 * (`npm run bench -- --part batch-entries`, about half a minute): batch increments of
 * BENCH_BATCH_ENTRIES uniform entries (amount 1, at now, spread over 10 000 existing items) into a
 * plain sum board (no views, ties, actors, segments or item cap) of one window and of two, against a
 * floor function given the same entry arguments and running the same Redis commands per entry
 * (HINCRBY into the slot, ZINCRBY into the results) and nothing else. Figures: commandstats µs per entry and Redis main-thread CPU µs per
 * entry, medians of BENCH_BATCH_ROUNDS interleaved rounds (call-rounds.ts).
 */
import Redis from 'ioredis';
import { PreparedBoard } from '../src/ranking/core/board';
import { RANKING } from '../src/ranking/ranking.functions';
import { fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, median, Pipeline, variant, Variant } from './call-rounds';
import { benchFunctions } from './functions-client';
import { PLAIN_BOARD_ITEMS, makePlainBoard, onPlainShard } from './plain-boards';
import { startRedisServer } from './process-stats';

const S = RANKING.functions;
const ENTRIES = Number(process.env.BENCH_BATCH_ENTRIES ?? 1_000);
const ROUNDS = Number(process.env.BENCH_BATCH_ROUNDS ?? 5);
const CALLS = 200;
const PIPELINE = 10;
const ITEMS = PLAIN_BOARD_ITEMS;
let expireChunk = 0;

const FLOOR_LIBRARY = `#!lua name=tb_bench_batch_floor
local FIELDS = { 'version', 'aggregate', 'ties', 'views', 'snapshots', 'maxItems', 'shards', 'actors', 'blockedUntil', 'slotDueSec', 'indexedSec' }
redis.register_function('bare_batch', function(keys, args)
  redis.call('HMGET', keys[1], unpack(FIELDS))
  local windows = tonumber(args[1])
  for w = 0, windows - 1 do
    for i = 2, #args, 2 do
      redis.call('HINCRBY', keys[2 + w], args[i], 1)
      redis.call('ZINCRBY', keys[2 + windows + w], 1, args[i])
    end
  end
  redis.call('HINCRBY', keys[1], 'ver', 1)
  return (#args - 1) / 2
end)
`;

const on = (board: PreparedBoard, nowMs: number) => onPlainShard(board, nowMs, expireChunk);

function items(n: number): string[] {
  return Array.from({ length: ENTRIES }, (_, i) => `i${((n * ENTRIES + i) * 7919) % ITEMS}`);
}

/** A floor entry's args as the batch sends plain entries (item, amount): Redis turns each into a Lua string. */
function entryArgs(n: number): Array<string | number> {
  return items(n).flatMap((item) => [item, 1]);
}

/** `newItems`: the client's allowance the service sends with quotas on (its default), else no quota. */
function batchVariant(board: PreparedBoard, nowMs: number, label: string, newItems?: number): Variant {
  const call = (n: number) =>
    fcallArgs(
      S.incrementBatch,
      S.incrementBatch.build({
        ...on(board, nowMs),
        ...(newItems === undefined ? {} : { newItems }),
        entries: items(n).map((item) => ({ item, amount: 1 })),
      }),
    );
  return variant(label, 'fcall', (p: Pipeline, n) => p.fcall(S.incrementBatch.redisName, ...call(n)));
}

function floorVariant(board: PreparedBoard, nowMs: number, label: string): Variant {
  const keys = board.shards[0].keys;
  const nowSec = Math.floor(nowMs / 1000);
  const windows = board.config.windows;
  const slots = windows.map((w) => keys.slot(w.name, nowSec - (nowSec % w.intervalSec)));
  const tops = windows.map((w) => keys.top(w.name));
  return variant(label, 'fcall', (p: Pipeline, n) =>
    p.fcall('bare_batch', 1 + 2 * windows.length, keys.cfg(), ...slots, ...tops, windows.length, ...entryArgs(n)),
  );
}

/** A variant's row: its Redis and CPU time per entry of a batch. */
function printPerEntry(v: Variant): void {
  const per = (x: number) => (x / ENTRIES).toFixed(2);
  console.log(
    `| ${v.name} | ${per(median(v.rounds))} (${per(Math.min(...v.rounds))} / ${per(Math.max(...v.rounds))}) | ${per(median(v.cpu))} |`,
  );
}

export async function batchEntriesBench(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    const { functions, ranking, prefix } = await benchFunctions(server.url, redis, [RANKING.library]);
    expireChunk = ranking.expireChunk;
    await redis.function('LOAD', 'REPLACE', FLOOR_LIBRARY);
    const nowMs = Date.now();
    const variants: Variant[] = [];
    for (const count of [1, 2]) {
      const board = await makePlainBoard({
        functions,
        prefix,
        name: `bench${count}`,
        windowCount: count,
        nowMs,
        expireChunk,
        amountOf: () => 1,
      });
      variants.push(batchVariant(board, nowMs, `batch of ${ENTRIES}, ${count} window(s)`));
      variants.push(
        batchVariant(board, nowMs, `  the same with the client's allowance (quotas on, the default)`, ENTRIES),
      );
      variants.push(
        floorVariant(board, nowMs, `floor: its HINCRBY + ZINCRBY per entry and window, ${count} window(s)`),
      );
    }
    const loadBefore = loadAverage();
    await measure(redis, variants, { rounds: ROUNDS, calls: CALLS, pipelined: PIPELINE });
    console.log(`${CALLS} batches x ${ROUNDS} rounds; load average ${loadBefore} → ${loadAverage()}.\n`);
    console.log('| call | µs per entry inside Redis, median (lowest / highest) | CPU µs per entry, median |');
    console.log('| ---- | ---: | ---: |');
    for (const v of variants) printPerEntry(v);
  } finally {
    redis.disconnect();
    await stopChild(server.child);
  }
}
