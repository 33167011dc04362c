/**
 * Instructions the server process spends per increment, the service against the hand-rolled server,
 * counted under callgrind (`npm run bench -- --part process-instructions`; this VM has no hardware
 * counters). Each server runs under `valgrind --tool=callgrind --instr-atstart=no` on one private
 * redis-server holding the hot-path board (bench/hot-seed.ts); instrumentation is switched on for a
 * warm-up of PROC_WARMUP (3 000) increments, the counts zeroed, and PROC_REQUESTS (10 000) increments
 * at PROC_CONNECTIONS (16) counted, PROC_ROUNDS (2) times per server in turn. The count includes every
 * thread of the process (V8's collector and compiler helpers): the CPU /proc counts. PROC_DISTS names
 * other service builds (`name=dir/dist`, comma-separated) counted in the same rounds.
 */
import autocannon from 'autocannon';
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import Redis from 'ioredis';
import { freePort, stopChild } from '../harness/processes';
import { loadAverage } from './call-rounds';
import { BENCH_ADMIN_TOKEN, BOARD, ITEMS, PREFIX, seededService } from './hot-seed';
import { startRedisServer, waitForHttp } from './process-stats';

const SERVER_HOST = '127.0.0.1';
const WARMUP = Number(process.env.PROC_WARMUP ?? 3000);
const REQUESTS = Number(process.env.PROC_REQUESTS ?? 10_000);
const CONNECTIONS = Number(process.env.PROC_CONNECTIONS ?? 16);
const ROUNDS = Number(process.env.PROC_ROUNDS ?? 2);
/** PROC_DISTS=name=dir,...: other service builds (their dist/) counted in the same rounds. */
const OTHER_DISTS = (process.env.PROC_DISTS ?? '').split(',').filter(Boolean);

interface Counted {
  name: string;
  child: ChildProcess;
  url: string;
  path: string;
  dir: string;
}

async function underCallgrind(name: string, args: string[], env: Record<string, string>, path: string) {
  const dir = mkdtempSync(join(tmpdir(), 'proc-instr-'));
  const port = await freePort();
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--instr-atstart=no',
      `--callgrind-out-file=${join(dir, 'cg.%p')}`,
      `--vgdb-prefix=${join(dir, 'vgdb')}`,
      process.execPath,
      ...args,
    ],
    {
      env: { ...process.env, PORT: String(port), HOST: SERVER_HOST, ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
      cwd: join(__dirname, '..'),
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const top = `${url}${path.startsWith('/minimal') ? '/minimal' : `/boards/${BOARD}`}/top`;
  // Under valgrind a boot takes minutes on a loaded machine: waitForHttp's bound is a service's.
  for (let attempt = 0; ; attempt++)
    try {
      await waitForHttp(top);
      break;
    } catch (error) {
      if (attempt === 9) throw error;
    }
  return { name, child, url, path, dir };
}

/**
 * callgrind_control on the server, through its own vgdb pipe; answers what it printed.
 */
function control(server: Counted, ...flags: string[]): string {
  const prefix = `--vgdb-prefix=${join(server.dir, 'vgdb')}`;
  // vgdb names its pipe after HOST too: the servers run with the service's HOST.
  const env = { ...process.env, HOST: SERVER_HOST };
  const done = spawnSync('callgrind_control', [prefix, ...flags, String(server.child.pid)], { encoding: 'utf8', env });
  if (done.status !== 0 || /error/i.test(done.stderr))
    throw new Error(`callgrind_control ${flags.join(' ')}: ${done.stderr}`);
  return done.stdout;
}

/** Answers other than 2xx (a Redis call timed out under valgrind's slowness): a count is void past 1 %. */
function increments(server: Counted, amount: number): Promise<number> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${server.url}${server.path}`,
        method: 'POST',
        body: '{"amount":1}',
        headers: { 'content-type': 'application/json' },
        requests: [
          {
            setupRequest: (request) => ({
              ...request,
              path: server.path.replace('[<item>]', `seed-${randomInt(ITEMS)}`),
            }),
          },
        ],
        connections: CONNECTIONS,
        amount,
        timeout: 60,
      },
      (error, result) => {
        if (error) return reject(error);
        if (result.non2xx > 0) console.log(`${server.name}: ${result.non2xx} answers not 2xx`);
        resolve(result['2xx']);
      },
    );
  });
}

/** The instructions counted since the counters were last zeroed, every thread's (`-e` shows one line a thread). */
function countedSinceZero(server: Counted): number {
  const shown = control(server, '-e');
  const threads = [...shown.matchAll(/^\s*Th\s+\d+\s+([\d,]+)/gm)].map((line) => Number(line[1].replaceAll(',', '')));
  if (threads.length === 0) throw new Error(`callgrind_control -e showed no totals: ${shown}`);
  return threads.reduce((sum, count) => sum + count, 0);
}

/**
 * bench/bare-server.ts as JavaScript beside the build, with the bench module it imports: ts-node
 * compiling it and its imports under valgrind took over ten minutes on a loaded machine.
 */
function bareServerScript(main: string): string {
  besideBuild(main, 'plain-boards', (source) => source);
  const lua = JSON.stringify(join(__dirname, 'minimal-increment.lua'));
  return besideBuild(main, 'bare-server', (source) => source.replace("join(__dirname, 'minimal-increment.lua')", lua));
}

/**
 * bench/<name>.ts as dist/bench-<name>.js: its imports of bench/ taken from their own such copies, of
 * src/ from the build.
 */
function besideBuild(main: string, name: string, adapt: (source: string) => string): string {
  const source = adapt(readFileSync(join(__dirname, `${name}.ts`), 'utf8'))
    .replaceAll("from './", "from './bench-")
    .replaceAll("'../src/", "'./");
  const script = join(dirname(main), `bench-${name}.js`);
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  });
  writeFileSync(script, outputText);
  return script;
}

async function counted(server: Counted): Promise<number> {
  control(server, '-z');
  const ok = await increments(server, REQUESTS);
  const count = countedSinceZero(server);
  if (ok < REQUESTS * 0.99) throw new Error(`${server.name}: ${ok} of ${REQUESTS} answered 2xx`);
  return count;
}

/** The servers counted: this checkout's build, PROC_DISTS' builds, and the hand-rolled server, booted together. */
async function bootAll(redisUrl: string, env: Record<string, string>): Promise<Counted[]> {
  const incrementPath = `/boards/${BOARD}/items/[<item>]/increment`;
  const main = join(__dirname, '..', 'dist', 'main.js');
  const builds: Array<[string, string]> = [['service', main]];
  for (const named of OTHER_DISTS) {
    const [name, dir] = named.split('=');
    builds.push([name, join(dir, 'main.js')]);
  }
  const handRolledEnv = { REDIS_URL: redisUrl, KEY_PREFIX: PREFIX, BOARD };
  return Promise.all([
    ...builds.map(([name, script]) => underCallgrind(name, [script], env, incrementPath)),
    underCallgrind('hand-rolled', [bareServerScript(main)], handRolledEnv, '/minimal/[<item>]/increment'),
  ]);
}

/** Each server's instructions per increment, ROUNDS times, the servers taking turns. */
async function countRounds(servers: Counted[]): Promise<Map<string, number[]>> {
  for (const server of servers) {
    control(server, '--instr=on');
    await increments(server, WARMUP);
  }
  const counts = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++)
    for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
      const perRequest = (await counted(server)) / REQUESTS;
      counts.set(server.name, [...(counts.get(server.name) ?? []), perRequest]);
      console.log(
        `round ${round} ${server.name}: ${perRequest.toFixed(0)} instructions per increment (load ${loadAverage()})`,
      );
    }
  return counts;
}

export async function processInstructionsBench(): Promise<void> {
  const redisServer = await startRedisServer();
  const redis = new Redis(redisServer.url);
  const servers: Counted[] = [];
  try {
    const env: Record<string, string> = {
      REDIS_URL: redisServer.url,
      ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
      KEY_PREFIX: PREFIX,
    };
    const seeded = await seededService(env, redis, PREFIX);
    // Under valgrind a call's reply takes longer than the 500 ms default on a loaded machine: a 503 there is the bench's.
    env.REDIS_COMMAND_TIMEOUT_MS = '60000';
    await stopChild(seeded.child);
    servers.push(...(await bootAll(redisServer.url, env)));
    console.log(`booted under callgrind (load ${loadAverage()})`);
    const counts = await countRounds(servers);
    const base = counts.get('hand-rolled') ?? [];
    console.log(
      `\n| server | instructions per increment, each round | against the hand-rolled, each round |\n| --- | ---: | ---: |`,
    );
    for (const [name, values] of counts)
      console.log(
        `| ${name} | ${values.map((v) => v.toFixed(0)).join(', ')} | ${values.map((v, i) => (v / base[i]).toFixed(3)).join(', ')} |`,
      );
  } finally {
    redis.disconnect();
    for (const server of servers) {
      await stopChild(server.child);
      rmSync(server.dir, { recursive: true, force: true });
    }
    await stopChild(redisServer.child);
  }
}
