/**
 * `npm run bench`: the one way to run a benchmark of bench/. Every benchmark is a part registered in
 * bench/parts/ (name, capability, what it measures, knobs); each runs against private servers on free
 * ports of 127.0.0.1 and prints markdown tables.
 *
 *   npm run bench                              the default set
 *   npm run bench -- --part <name>[,<name>]    any parts (or BENCH_PARTS=<name>,…)
 *   npm run bench -- --capability <name>       every part of a capability (or BENCH_CAPABILITIES=…)
 *   npm run bench -- --list                    the parts, with what they measure and their knobs
 *
 * BENCH_SKIP=<name>,… leaves parts out (and the `http` part's steps routes, idempotent, sharded);
 * BENCH_DURATION_SEC (5) and BENCH_REPEATS (5) tune the parts that take them. A failing part is
 * reported and the next one runs; the command then exits 1.
 */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import Redis from 'ioredis';
import { stopChild } from '../harness/processes';
import { loadLibraries } from '../src/redis/functions';
import { RANKING } from '../src/ranking/ranking.functions';
import { DURATION_SEC } from './load';
import { PARTS } from './parts';
import type { BenchContext, BenchPart } from './parts/part';
import { startRedisServer } from './process-stats';

interface Selection {
  parts: string[];
  capabilities: string[];
  list: boolean;
}

const names = (value: string | undefined): string[] => (value ?? '').split(',').filter(Boolean);

/** `--part a,b`, `--part=a,b` (repeatable), `--capability …`, `--list`; the environment's lists otherwise. */
export function selectionOf(argv: readonly string[], env: NodeJS.ProcessEnv): Selection {
  const selection: Selection = { parts: [], capabilities: [], list: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (flag === '--list') selection.list = true;
    else if (flag === '--part' || flag === '--capability') {
      const value = inline ?? argv[++i];
      (flag === '--part' ? selection.parts : selection.capabilities).push(...names(value));
    } else throw new Error(`unknown argument ${argv[i]} (--part, --capability, --list)`);
  }
  if (selection.parts.length === 0 && selection.capabilities.length === 0) {
    selection.parts = names(env.BENCH_PARTS);
    selection.capabilities = names(env.BENCH_CAPABILITIES);
  }
  return selection;
}

/** The parts a selection names, in the registry's order; the default set when it names none. */
export function partsOf(selection: Selection, skip: ReadonlySet<string>): BenchPart[] {
  const unknown = [
    ...selection.parts.filter((name) => !PARTS.some((part) => part.name === name)),
    ...selection.capabilities.filter((name) => !PARTS.some((part) => part.capability === name)),
  ];
  if (unknown.length > 0) throw new Error(`no such part or capability: ${unknown.join(', ')} (--list lists them)`);
  const named = selection.parts.length > 0 || selection.capabilities.length > 0;
  return PARTS.filter(
    (part) =>
      !skip.has(part.name) &&
      (named
        ? selection.parts.includes(part.name) || selection.capabilities.includes(part.capability)
        : part.byDefault === true),
  );
}

function printList(): void {
  console.log('| part | capability | default | what it measures | knobs |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const part of PARTS)
    console.log(
      `| ${part.name} | ${part.capability} | ${part.byDefault ? 'yes' : ''} | ${part.measures} | ${part.knobs.join(', ')} |`,
    );
}

/** The shared redis-server of the parts that ask for it, started on first use; `stop` ends it if it started. */
function sharedRedisOnDemand(): { get: BenchContext['sharedRedis']; stop: () => Promise<void> } {
  let started: Promise<{ server: Awaited<ReturnType<typeof startRedisServer>>; redis: Redis }> | undefined;
  const start = async () => {
    const server = await startRedisServer();
    // A plain client: in the parts' tight loops auto-pipelining makes the client the bottleneck (about a
    // third fewer calls/s, see docs/benchmarks.md); the 'inside Redis' figures do not depend on the client.
    const redis = new Redis(server.url);
    await loadLibraries(redis, [RANKING.library]);
    return { server, redis };
  };
  return {
    get: async () => {
      started ??= start();
      const { server, redis } = await started;
      return { url: server.url, redis };
    },
    stop: async () => {
      if (started === undefined) return;
      const { server, redis } = await started;
      redis.disconnect();
      await stopChild(server.child);
    },
  };
}

function printHeader(parts: readonly BenchPart[], repeats: number): void {
  const redisVersion = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).match(/v=(\S+)/)?.[1];
  console.log(`# trendboard benchmarks\n`);
  console.log(
    `Machine: ${cpus()[0].model}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB; Node ${process.version}; Redis ${redisVersion}`,
  );
  console.log(`Date: ${new Date().toISOString()}; ${DURATION_SEC} s per run, ${repeats} runs each (best / median)`);
  console.log(`Parts: ${parts.map((part) => part.name).join(', ')}\n`);
}

async function runParts(parts: readonly BenchPart[], skip: ReadonlySet<string>): Promise<void> {
  const repeats = Number(process.env.BENCH_REPEATS ?? 5);
  const shared = sharedRedisOnDemand();
  const context: BenchContext = { sharedRedis: shared.get, repeats, durationSec: DURATION_SEC, skip };
  printHeader(parts, repeats);
  try {
    for (const part of parts) {
      const started = Date.now();
      process.stderr.write(`bench part ${part.name}…\n`);
      try {
        await part.run(context);
        process.stderr.write(`bench part ${part.name} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      } catch (error: unknown) {
        console.error(`bench part ${part.name} failed:`, error);
        process.exitCode = 1;
      }
    }
  } finally {
    await shared.stop();
  }
}

async function main(): Promise<void> {
  const selection = selectionOf(process.argv.slice(2), process.env);
  if (selection.list) return printList();
  const skip = new Set(names(process.env.BENCH_SKIP));
  await runParts(partsOf(selection, skip), skip);
}

if (require.main === module)
  main()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    // Clients a failed part left open (reconnecting to a stopped server) must not keep the bench alive.
    .finally(() => process.exit());
