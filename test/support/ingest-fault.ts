import { ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { Cluster } from 'ioredis';
import { freePort, stopChild, waitForPing } from './processes';

/** How many messages a fault test sends: small in `npm test`, 200 000 with INGEST_FAULT_MESSAGES=200000. */
export const FAULT_MESSAGES = Number(process.env.INGEST_FAULT_MESSAGES ?? 6000);
/** A fault test's time budget: under 60 s for the default size, minutes for the full one. */
export const FAULT_TIMEOUT_MS = FAULT_MESSAGES > 20_000 ? 900_000 : 60_000;

/** Boards of the fault tests: one unsharded, one of 4 shards; the window every event lands in. */
export const FAULT_BOARDS = [
  { name: 'one', shards: 1 },
  { name: 'four', shards: 4 },
];
export const FAULT_WINDOW = '1h';

/** A Redis that keeps every acknowledged write across a crash (AOF, fsync always), on a free port. */
export interface DurableRedis {
  url: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startDurableRedis(): Promise<DurableRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tb-redis-'));
  const start = async () => {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
      ],
      { stdio: 'ignore' },
    );
    if (!(await waitForPing(port, child))) throw new Error('redis-server did not start');
    return child;
  };
  let child = await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    restart: async () => {
      await stopChild(child);
      child = await start();
    },
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One message of the test: its payload, and whether it must end in the dead letters. */
export interface FaultMessage {
  payload: string;
  valid: boolean;
  board?: string;
  item?: string;
  amount?: number;
}

/** Deterministic messages over the boards, about 3% invalid of three kinds. */
export function faultMessages(count: number, seed = 27): FaultMessage[] {
  let state = seed;
  const random = () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
  return Array.from({ length: count }, (_, i): FaultMessage => {
    const roll = random();
    if (roll < 0.01) return { payload: `not json ${i}`, valid: false };
    if (roll < 0.02) return { payload: JSON.stringify({ board: 'missing', item: 'x' }), valid: false };
    if (roll < 0.03) return { payload: JSON.stringify({ board: 'one', item: 'x', amount: 0 }), valid: false };
    const board = FAULT_BOARDS[Math.floor(random() * FAULT_BOARDS.length)].name;
    const item = `item-${Math.floor(random() * 300)}`;
    const amount = 1 + Math.floor(random() * 5);
    return { payload: JSON.stringify({ board, item, amount }), valid: true, board, item, amount };
  });
}

/** Brute force: each board's items with their sums, in the order the comparison uses. */
export function expectedBoards(messages: FaultMessage[]): Record<string, string[]> {
  const sums = new Map<string, Map<string, number>>();
  for (const m of messages) {
    if (!m.valid) continue;
    const board = sums.get(m.board!) ?? new Map<string, number>();
    board.set(m.item!, (board.get(m.item!) ?? 0) + m.amount!);
    sums.set(m.board!, board);
  }
  return Object.fromEntries(
    FAULT_BOARDS.map(({ name }) => [
      name,
      [...(sums.get(name) ?? new Map())].map(([item, sum]) => `${item}=${sum}`).sort(),
    ]),
  );
}

/** What the boards hold, read straight from every shard's results of the window. */
export async function storedBoards(redis: Redis | Cluster, prefix: string): Promise<Record<string, string[]>> {
  const boards: Record<string, string[]> = {};
  for (const { name, shards } of FAULT_BOARDS) {
    const rows: string[] = [];
    for (let shard = 0; shard < shards; shard++) {
      const tag = shard === 0 ? `{${prefix}board:${name}}` : `{${prefix}board:${name}/${shard}}`;
      const flat = await redis.zrange(`${tag}:${FAULT_WINDOW}:top`, 0, -1, 'WITHSCORES');
      for (let i = 0; i < flat.length; i += 2) rows.push(`${flat[i]}=${flat[i + 1]}`);
    }
    boards[name] = rows.sort();
  }
  return boards;
}

/** An instance of the service in a child process (test/support/ingest-worker.ts). */
export function startWorker(env: Record<string, string>): ChildProcess {
  return fork(join(__dirname, 'ingest-worker.ts'), [], {
    execArgv: ['-r', 'ts-node/register/transpile-only'],
    env: { ...process.env, ...env, LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
}

export async function stopWorker(child: ChildProcess, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (signal === 'SIGKILL') return stopChild(child);
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done` answers true (probing every 200 ms), or fails after `timeoutMs`. */
export async function waitFor(what: string, done: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Resolves when the worker has booted (or exited). */
function booted(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('message', () => resolve());
    child.once('exit', () => resolve());
  });
}

/**
 * The chaos of a fault test while `produce` sends the messages: the first instance killed (SIGKILL)
 * at a random point of its work `kills` times and started again, a second instance joining after the
 * first kill and leaving (SIGTERM) after the second, and `restartServer` once then. `applied` reads
 * how many events were applied so far: answered as seen just before each kill, so the test can check
 * that the kills fell while work was under way.
 */
export async function chaos(
  env: Record<string, string>,
  produce: Promise<void>,
  restartServer: () => Promise<void>,
  applied: () => Promise<number>,
  kills = 3,
): Promise<{ workers: ChildProcess[]; appliedAtKills: number[] }> {
  let first = startWorker(env);
  let second: ChildProcess | undefined;
  const workers = [first];
  const appliedAtKills: number[] = [];
  for (let kill = 0; kill < kills; kill++) {
    await booted(first);
    await sleep(700 + Math.random() * 1500);
    appliedAtKills.push(await applied().catch(() => -1));
    await stopWorker(first, 'SIGKILL');
    first = startWorker(env);
    workers.push(first);
    if (kill === 0) {
      second = startWorker(env);
      workers.push(second);
    }
    if (kill === 1) {
      await stopWorker(second!, 'SIGTERM');
      await restartServer();
    }
  }
  await produce;
  return { workers, appliedAtKills };
}
