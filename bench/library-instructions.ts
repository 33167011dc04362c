/**
 * Issue #46 for tb_counters and tb_stats, counted instead of timed
 * (`npm run bench -- --part library-instructions`, a few minutes): the instructions Redis
 * executes per counter increment and read and per stats index admission, record and merge, for each
 * library as each commit of INSTR_REFS (default main) built its calls and assembled its Lua, and for
 * today's, all loaded side by side in one redis-server under callgrind (bench/redis-instructions.ts).
 * Every library gets the same domain values (bench/library-calls.ts, built by each commit's own
 * *.functions.ts) on the same keys at one fixed time, INSTR_CALLS calls per case, one at a time, after
 * one warm-up pass of every library (so each finds the counters and pairs live, as the others do).
 * INSTR_CONTROL=1 loads today's libraries a second time under other names: the run's noise.
 * INSTR_CASES=increment,read counts only the cases whose label holds one of those words.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { stopChild } from '../harness/processes';
import { median } from './call-rounds';
import { COLLECT_LIBRARY, perCall } from './functions-instructions';
import { LibraryCalls, libraryCalls } from './library-calls';
import { Callgrind, startCallgrindRedis } from './redis-instructions';

const CALLS = Number(process.env.INSTR_CALLS ?? 256);
const ROUNDS = Number(process.env.INSTR_ROUNDS ?? 3);
const CONTROL = process.env.INSTR_CONTROL === '1';
const REFS = (process.env.INSTR_REFS ?? 'main').split(',').filter((ref) => ref !== '');
const CASES = (process.env.INSTR_CASES ?? '').split(',').filter((word) => word !== '');
const PREFIX = 'bench:';

interface Variant {
  label: string;
  calls: LibraryCalls;
}

/** The calls as `ref` builds them, from a worktree of that commit (bench/library-calls.ts of this tree). */
function callsAt(ref: string, nowMs: number): LibraryCalls {
  const root = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8', cwd: __dirname }).trim();
  const dir = mkdtempSync(join(tmpdir(), 'tb-bench-before-'));
  execFileSync('git', ['worktree', 'add', '--detach', '--quiet', dir, ref], { cwd: root });
  try {
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    const script = `process.stdout.write(JSON.stringify(require(${JSON.stringify(join(__dirname, 'library-calls'))}).libraryCalls(${JSON.stringify(dir)}, ${JSON.stringify(PREFIX)}, ${nowMs})))`;
    const out = execFileSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      encoding: 'utf8',
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    return JSON.parse(out) as LibraryCalls;
  } finally {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root });
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same libraries under other names (a `_copy` suffix): the same code, counted apart. */
function copyOf(calls: LibraryCalls): LibraryCalls {
  const rename = (text: string) =>
    Object.values(calls.names).reduce((out, name) => out.split(name).join(`${name}_copy`), text);
  return {
    sources: Object.fromEntries(Object.entries(calls.sources).map(([feature, source]) => [feature, rename(source)])),
    names: Object.fromEntries(Object.entries(calls.names).map(([feature, name]) => [feature, `${name}_copy`])),
    cases: calls.cases,
  };
}

type Send = (variant: Variant, index: number, n: number) => Promise<unknown>;

/** Every variant's libraries loaded, its cases the same as this tree's, and each call made once. */
async function loadAndWarm(bench: { redis: Redis; variants: Variant[]; labels: string[]; send: Send }): Promise<void> {
  const { redis, variants, labels, send } = bench;
  await redis.function('LOAD', 'REPLACE', COLLECT_LIBRARY);
  for (const { calls } of variants) {
    for (const source of Object.values(calls.sources)) await redis.function('LOAD', 'REPLACE', source);
  }
  for (const variant of variants) {
    if (variant.calls.cases.map((c) => c.label).join() !== labels.join())
      throw new Error(`${variant.label}: other cases`);
    for (const [index, c] of variant.calls.cases.entries()) {
      for (let n = 0; n < c.calls.length; n++) await send(variant, index, n);
    }
  }
}

/** Interleaved rounds, in turn forwards and backwards: per variant and case, instructions per call by round. */
async function countRounds(bench: {
  redis: Redis;
  server: Callgrind;
  variants: Variant[];
  counted: number[];
  labels: string[];
  send: Send;
}) {
  const { redis, server, variants, counted, labels, send } = bench;
  const counts = variants.map(() => labels.map(() => [] as number[]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...variants.keys()];
    if (round % 2 === 1) order.reverse();
    for (const v of order) {
      for (const index of counted) {
        counts[v][index].push(await perCall(redis, server, (n) => send(variants[v], index, n), CALLS));
      }
    }
  }
  return counts;
}

function printCounts(table: { variants: Variant[]; counted: number[]; labels: string[]; counts: number[][][] }): void {
  const { variants, counted, labels, counts } = table;
  console.log(
    `callgrind, ${ROUNDS} interleaved rounds of ${CALLS} calls each, one at a time: instructions per call.\n`,
  );
  console.log(`Medians over the rounds (per round, to ${variants[0].label}'s).\n`);
  console.log(`| case | ${variants.map((v) => v.label).join(' | ')} |\n| ---- |${' ---: |'.repeat(variants.length)}`);
  for (const index of counted) {
    const label = labels[index];
    const first = counts[0][index];
    const cells = counts.map((byCase) => {
      const values = byCase[index];
      return `${median(values).toFixed(0)} (${median(values.map((v, r) => v / first[r])).toFixed(3)})`;
    });
    console.log(`| ${label} | ${cells.join(' | ')} |`);
  }
}

export async function libraryInstructionsBench(): Promise<void> {
  const nowMs = Date.now();
  const variants: Variant[] = REFS.map((ref) => ({ label: ref, calls: callsAt(ref, nowMs) }));
  const today = libraryCalls(join(__dirname, '..'), PREFIX, nowMs);
  if (CONTROL) variants.push({ label: 'this tree (a copy)', calls: copyOf(today) });
  variants.push({ label: 'this tree', calls: today });
  const server = await startCallgrindRedis(['--hz', '1']);
  const redis = new Redis(server.url, { enableAutoPipelining: false });
  try {
    const send: Send = (variant, index, n) => {
      const c = variant.calls.cases[index];
      const call = c.calls[n % c.calls.length];
      return redis.fcall(`${variant.calls.names[c.feature]}_${c.handler}`, ...call);
    };
    const labels = today.cases.map((c) => c.label);
    const counted = [...labels.keys()].filter((i) => CASES.length === 0 || CASES.some((w) => labels[i].includes(w)));
    await loadAndWarm({ redis, variants, labels, send });
    const counts = await countRounds({ redis, server, variants, counted, labels, send });
    printCounts({ variants, counted, labels, counts });
  } finally {
    redis.disconnect();
    await stopChild(server.child);
    rmSync(server.dir, { recursive: true, force: true });
  }
}
