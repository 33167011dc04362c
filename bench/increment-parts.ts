/**
 * Where a one-window increment's time goes inside Redis (issues #23, #24): copies of this checkout's
 * tb_ranking, each with the increment returning early at one point of its handler (`do return ... end`
 * inserted after a line of increment.lua), loaded side by side in one private redis-server under names
 * of their own, and the whole function, called with the same FCALL on the same plain board of
 * bench/plain-boards.ts in interleaved rounds: `npm run bench -- --part increment-parts`
 * (under a minute). Each row's figure less the row above it is what that part costs. BENCH_PARTS_ROUNDS
 * rounds (21) of 2 000 calls pipelined 100; BENCH_PARTS_QUOTA=1 sends an allowance of one new item, as
 * the service does with quotas on. A marker line no longer found in increment.lua stops the run.
 */
import Redis from 'ioredis';
import { UNLIMITED } from '../src/governance/growth-quota';
import { RANKING } from '../src/ranking/ranking.functions';
import { fcallArgs } from '../src/redis/redis-functions';
import { stopChild } from '../harness/processes';
import { loadAverage, measure, median, Pipeline, variant, Variant } from './call-rounds';
import { benchFunctions } from './functions-client';
import { makePlainBoard, onPlainShard, PLAIN_BOARD_ITEMS } from './plain-boards';
import { startRedisServer } from './process-stats';

const S = RANKING.functions;
const ROUNDS = Number(process.env.BENCH_PARTS_ROUNDS ?? 21);
const NEW_ITEMS = process.env.BENCH_PARTS_QUOTA ? 1 : UNLIMITED;

/** The early returns: after the first line of the handler holding `after`, return `value`. */
const PARTS = [
  { label: 'FCALL, binding the call (begin_call)', after: '  call_state.begin_call(keys, args)', value: '0' },
  { label: '+ the config HMGET (version_error)', after: '  if err then return redis.error_reply(err) end', value: '0' },
  { label: '+ snapshot boundaries (cross_all)', after: '  local confs = snapshot.cross_all(', value: '0' },
  { label: '+ expiry and the slot due', after: '  slot_due.settle_slot_due()', value: '0' },
  { label: '+ the per-call setup (item cap, adder)', after: '  call.keeping, call.add = ', value: '0' },
  {
    label: "+ the request's arguments, idempotency, span",
    after: '      local segments = segmentation.segment_names(',
    value: '0',
  },
  { label: '+ admission', after: '        applied = applied + 1', value: '0' },
  {
    label: '+ the add and its answer (no version bump)',
    after: '  if applied > 0 then snapshot.bump_version',
    value: 'answers',
    before: true,
  },
];

/** The library with the increment returning at `part`, under the name `name`. */
function partLibrary(name: string, part: (typeof PARTS)[number]): string {
  const source = RANKING.library.source.split(RANKING.library.name).join(name);
  const handler = source.indexOf('local function increment(keys, args)');
  const at = source.indexOf(`\n${part.after}`, handler);
  if (handler < 0 || at < 0) throw new Error(`increment.lua no longer holds "${part.after}"`);
  const lineEnd = part.before ? at : source.indexOf('\n', at + 1);
  return `${source.slice(0, lineEnd)}\n  do return ${part.value} end${source.slice(lineEnd)}`;
}

export async function incrementPartsBench(): Promise<void> {
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  try {
    const { functions, ranking, prefix } = await benchFunctions(server.url, redis, [RANKING.library]);
    const names = PARTS.map((_, i) => `tb_part${i}`);
    for (const [i, part] of PARTS.entries()) await redis.function('LOAD', 'REPLACE', partLibrary(names[i], part));
    const nowMs = Date.now();
    const common = { functions, prefix, windowCount: 1, nowMs, expireChunk: ranking.expireChunk };
    const board = await makePlainBoard({ ...common, name: 'parts', amountOf: (i) => 1 + (i % 97) });
    const args = (n: number) =>
      fcallArgs(
        S.increment,
        S.increment.build({
          ...onPlainShard(board, nowMs, ranking.expireChunk),
          newItems: NEW_ITEMS,
          item: `i${(n * 7919) % PLAIN_BOARD_ITEMS}`,
          amount: 1,
        }),
      );
    const call = (redisName: string) => (p: Pipeline, n: number) => p.fcall(redisName, ...args(n));
    const variants: Variant[] = [
      ...PARTS.map((part, i) =>
        variant(part.label, 'fcall', call(S.increment.redisName.replace(RANKING.library.name, names[i]))),
      ),
      variant('the whole increment', 'fcall', call(S.increment.redisName)),
    ];
    const loadBefore = loadAverage();
    await measure(redis, variants, { rounds: ROUNDS, calls: 2_000, pipelined: 100 });
    report(variants, [loadBefore, loadAverage()]);
  } finally {
    redis.disconnect();
    await stopChild(server.child);
  }
}

function report(variants: Variant[], loads: string[]): void {
  console.log(`${ROUNDS} rounds, interleaved, allowance ${NEW_ITEMS}; load average ${loads.join(' → ')}.\n`);
  console.log('| returns after | µs per call, median | CPU µs per call, median | CPU µs more than the row above |');
  console.log('| ---- | ---: | ---: | ---: |');
  variants.forEach((v, i) => {
    const more = i > 0 ? (median(v.cpu) - median(variants[i - 1].cpu)).toFixed(2) : '';
    console.log(`| ${v.name} | ${median(v.rounds).toFixed(2)} | ${median(v.cpu).toFixed(2)} | ${more} |`);
  });
}
