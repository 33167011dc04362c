/**
 * What one HTTP increment costs Redis when it shares its call (issue #24's "Redis CPU per acknowledged
 * increment"), in one private redis-server (`npm run bench -- --part coalesced-increment`,
 * under a minute): the service's coalesced increment call (`increments`, BENCH_COALESCED requests of
 * allowance 1 per call, as WRITE_COALESCE_MS gathers them under load; default 16) on a plain one-window
 * board of 10 000 items, against the hand-rolled server's script (bench/minimal-increment.lua: HINCRBY,
 * ZINCRBY, ZCOUNT) called once per request. Then the same call from copies of the library with one
 * part taken out, so each part's share shows: every request answered by a constant (what is left is
 * the call, its arguments and the loop), a constant number (the records' entries), no rank, no add
 * commands; and every request through the general path (increment_one), as before the plain path.
 * Figures: Redis main-thread CPU µs per request, medians of BENCH_COALESCED_ROUNDS interleaved rounds
 * (call-rounds.ts), calls pipelined 100 at a time as ioredis sends them under load
 * (BENCH_COALESCED_PIPELINED: another number).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { PreparedBoard } from '../src/ranking/core/board';
import { RANKING } from '../src/ranking/ranking.functions';
import { fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, median, Pipeline, variant, Variant } from './call-rounds';
import { benchFunctions } from './functions-client';
import { makePlainBoard, onPlainShard, PLAIN_BOARD_ITEMS } from './plain-boards';
import { startRedisServer } from './process-stats';

const S = RANKING.functions;
const PER_CALL = Number(process.env.BENCH_COALESCED ?? 16);
const ROUNDS = Number(process.env.BENCH_COALESCED_ROUNDS ?? 11);
/** Calls in one pipeline (BENCH_COALESCED_PIPELINED, 100); 1 sends each call after the last one's reply, so Redis waits in epoll between calls, as between an HTTP service's calls. */
const PIPELINED = Number(process.env.BENCH_COALESCED_PIPELINED ?? 100);

/** A library copy with one part of the increment taken out: `from` replaced by `to` in its text. */
export interface Cut {
  label: string;
  from: string;
  to: string;
}

const EACH_REQUEST =
  '    if not (plain_keys and increment_plain(answers, item, amount, call.allowance_arg or own_allowance, plain_keys)) then';
const ADD_COMMANDS = '    local score, written = add_unwatched(nil, slot_keys[w], top_key, nil, item, amount_arg, nil)';
const RANK = "redis.call('ZCOUNT', top_key, '(' .. written, '+inf') + 1 or 0";
const PLAIN_SHARD = 'local plain_shard = not full and';

// The first two cuts answer every request as applied without looking and skip the general path after
// it (this bench's board is plain and its slot indexed, so every request takes the plain path).
export const CUTS: Cut[] = [
  {
    label: 'each request answered by a constant record',
    from: EACH_REQUEST,
    to: '    local at = #answers\n    answers[at + 1], answers[at + 2], answers[at + 3], answers[at + 4] = -1, 0, 5, 1\n    if false then',
  },
  {
    label: 'each request answered by a number',
    from: EACH_REQUEST,
    to: '    answers[#answers + 1] = 0\n    if false then',
  },
  { label: 'no rank (ZCOUNT)', from: RANK, to: '1 or 0' },
  { label: 'no add commands (HINCRBY, ZINCRBY)', from: ADD_COMMANDS, to: "    local score, written = 5, '5'" },
  {
    label: 'every request through increment_one (no plain path)',
    from: PLAIN_SHARD,
    to: 'local plain_shard = false and',
  },
];

export function cutLibrary(name: string, cut: Cut): string {
  const source = RANKING.library.source.split(RANKING.library.name).join(name);
  if (!source.includes(cut.from)) throw new Error(`the ranking library no longer holds "${cut.from}"`);
  return source.split(cut.from).join(cut.to);
}

/** Where a part of the increment ends: before the one line of the library's `increment` holding `before`. */
export interface IncrementPart {
  label: string;
  before: string;
}

/** bench/redis-instructions.ts's INSTR_PARTS rows, in the order the increment runs them. */
export const INCREMENT_PARTS: IncrementPart[] = [
  { label: 'the call and its arguments (returns after begin_named_call)', before: 'call_state.CALL.writes = true' },
  { label: '+ the config check (version_error: one HMGET)', before: 'local now_sec = header.now_sec' },
  { label: '+ the windows and their boundaries (open_write)', before: 'increment_begin(keys, header' },
  { label: "+ the call's state (increment_begin)", before: 'local call = INCREMENT' },
  { label: "+ the plain path's set-up", before: 'local applied, answers, width' },
  { label: '+ the requests', before: 'snapshot.bump_version(cfg_key, applied)' },
];

const INCREMENT_HEAD = 'local function increment(keys, args)\n';

/**
 * The increment's text up to each part's line, as the library holds it now (a part's anchor found on
 * no line or several, or out of order, throws): the cut returns just before that line.
 */
export function incrementPartCuts(parts: IncrementPart[] = INCREMENT_PARTS): Cut[] {
  const source = RANKING.library.source;
  const start = source.indexOf(INCREMENT_HEAD);
  if (start < 0) throw new Error(`the ranking library no longer holds "${INCREMENT_HEAD.trim()}"`);
  const lines = source.slice(start, source.indexOf('\nend\n', start)).split('\n');
  let last = 0;
  return parts.map(({ label, before }) => {
    const at = lines.findIndex((line) => line.includes(before));
    if (at <= last || lines.filter((line) => line.includes(before)).length !== 1)
      throw new Error(`the library's increment holds "${before}" not on one line after the part before`);
    last = at;
    const head = lines.slice(0, at).join('\n');
    return { label, from: `${head}\n${lines[at]}`, to: `${head}\n  if true then return 1 end\n${lines[at]}` };
  });
}

/** The `n`th call's item, spread over the board's items. */
const itemOf = (n: number) => `i${(n * 7919) % PLAIN_BOARD_ITEMS}`;

/** The `n`th coalesced call's FCALL arguments: PER_CALL requests of one point each. */
function coalescedArgs(call: { board: PreparedBoard; nowMs: number; expireChunk: number; n: number }) {
  const { board, nowMs, expireChunk, n } = call;
  return fcallArgs(
    S.increments,
    S.increments.build({
      ...onPlainShard(board, nowMs, expireChunk),
      requests: Array.from({ length: PER_CALL }, (_, k) => ({
        item: itemOf(n * PER_CALL + k),
        amount: 1,
        newItems: 1,
      })),
    }),
  );
}

export async function coalescedIncrementBench(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    const { functions, ranking, prefix } = await benchFunctions(server.url, redis, [RANKING.library]);
    const nowMs = Date.now();
    const common = { functions, prefix, windowCount: 1, nowMs, expireChunk: ranking.expireChunk };
    const board = await makePlainBoard({ ...common, name: 'coalesced', amountOf: (i) => 1 + (i % 97) });
    const minimal = await seedMinimal(redis, `{${prefix}minimal}`);
    const args = (n: number) => coalescedArgs({ board, nowMs, expireChunk: ranking.expireChunk, n });
    const names = CUTS.map((_, i) => `tb_cut${i}`);
    for (const [i, cut] of CUTS.entries()) await redis.function('LOAD', 'REPLACE', cutLibrary(names[i], cut));
    const coalesced = (redisName: string) => (p: Pipeline, n: number) => p.fcall(redisName, ...args(n));
    const variants: Variant[] = [
      variant(`the service's call, ${PER_CALL} requests`, 'fcall', coalesced(S.increments.redisName)),
      variant('hand-rolled script, 1 request', 'evalsha', (p, n) =>
        p.evalsha(minimal.sha, 2, ...minimal.keys, itemOf(n), 1),
      ),
      ...CUTS.map((cut, i) =>
        variant(`  ${cut.label}`, 'fcall', coalesced(S.increments.redisName.replace(RANKING.library.name, names[i]))),
      ),
    ];
    const loadBefore = loadAverage();
    await measure(redis, variants, { rounds: ROUNDS, calls: 1_000, pipelined: PIPELINED });
    report(variants, [loadBefore, loadAverage()]);
  } finally {
    redis.disconnect();
    await stopChild(server.child);
  }
}

/** The hand-rolled script's keys with the same 10 000 items, and the script loaded. */
export async function seedMinimal(redis: Redis, tag: string): Promise<{ sha: string; keys: [string, string] }> {
  const keys: [string, string] = [`${tag}:slot`, `${tag}:top`];
  const pipeline = redis.pipeline();
  for (let i = 0; i < PLAIN_BOARD_ITEMS; i++) {
    pipeline.hincrby(keys[0], `i${i}`, 1 + (i % 97));
    pipeline.zincrby(keys[1], 1 + (i % 97), `i${i}`);
  }
  await pipeline.exec();
  const sha = String(await redis.script('LOAD', readFileSync(join(__dirname, 'minimal-increment.lua'), 'utf8')));
  return { sha, keys };
}

function report(variants: Variant[], loads: string[]): void {
  console.log(`${ROUNDS} rounds, interleaved, pipelined ${PIPELINED}; load average ${loads.join(' → ')}.\n`);
  console.log('| call | Redis CPU µs per request, median |');
  console.log('| ---- | ---: |');
  for (const v of variants) {
    const requests = v.command === 'evalsha' ? 1 : PER_CALL;
    console.log(`| ${v.name} | ${(median(v.cpu) / requests).toFixed(2)} |`);
  }
}
