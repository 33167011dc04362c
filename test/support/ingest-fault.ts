import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import Redis, { Cluster } from 'ioredis';
import request from 'supertest';
import { stopChild } from '../../harness/processes';

export { type DurableRedis, startDurableRedis } from './durable-redis';

/**
 * How many messages a source's fault test sends: the ingest issue's 200 000 (INGEST_FAULT_MESSAGES
 * sets another count, 6 000 for a quick local run).
 */
export const FAULT_MESSAGES = Number(process.env.INGEST_FAULT_MESSAGES ?? 200_000);
/** A fault test's time budget. */
export const FAULT_TIMEOUT_MS = 240_000;
/** How long a source may take to drain once the chaos is over: below the test's budget, so a stuck drain is named. */
const DRAIN_BUDGET_MS = 150_000;

/** Boards of the fault tests: one unsharded, one of 4 shards; the window every event lands in. */
export const FAULT_BOARDS = [
  { name: 'one', shards: 1 },
  { name: 'four', shards: 4 },
];
export const FAULT_WINDOW = '1h';

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

/** An instance of the service in a child process (test/support/ingest-worker.ts), booted from cached JavaScript (cached-ts.mjs). */
export function startWorker(env: Record<string, string>): ChildProcess {
  const child = fork(join(__dirname, 'cached-ts.mjs'), [join(__dirname, 'ingest-worker.ts')], {
    execArgv: [],
    env: { ...process.env, ...env, LOG_LEVEL: 'error' },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  // Listened for from the start: the test may await other steps (a Redis restart) while the worker
  // boots, and a 'ready' or 'exit' sent before a later listener was attached would never be seen.
  bootOf.set(
    child,
    new Promise((resolve) => {
      child.once('message', (ready: { url: string }) => resolve(ready.url));
      child.once('exit', () => resolve(undefined));
    }),
  );
  return child;
}

/** A worker's boot: the URL it listens on once booted, undefined when it exited first. */
const bootOf = new WeakMap<ChildProcess, Promise<string | undefined>>();
/** How long a worker may take to boot before the test fails naming the step (well under FAULT_TIMEOUT_MS). */
const WORKER_BOOT_BUDGET_MS = 60_000;
/** How long a worker may take to leave after SIGTERM. */
const WORKER_STOP_BUDGET_MS = 30_000;

export async function stopWorker(child: ChildProcess, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (signal === 'SIGKILL') return stopChild(child);
  // A graceful stop that never ends is a bug of the service's shutdown: fail naming it, not the test's budget.
  await new Promise<void>((resolve, reject) => {
    const overdue = setTimeout(() => {
      reject(new Error(`worker ${child.pid} did not stop within ${WORKER_STOP_BUDGET_MS} ms of SIGTERM`));
      child.kill('SIGKILL');
    }, WORKER_STOP_BUDGET_MS);
    child.once('exit', () => {
      clearTimeout(overdue);
      resolve();
    });
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

/**
 * The workers' settings beside their Redis: short lease and waits, so a crash is taken over within
 * seconds, and a batch failed by the restarted server retried 20 ms later (not 250), and ioredis
 * connecting again every 10-100 ms, so the restart's outage ends as soon as the server is back.
 */
export function faultWorkerEnv(prefix: string): Record<string, string> {
  return {
    KEY_PREFIX: prefix,
    ADMIN_TOKEN: 'x'.repeat(32),
    SCHEDULER_ENABLED: 'false',
    INGEST_REFRESH_MS: '200',
    INGEST_LEASE_MS: '3000',
    INGEST_WAIT_MS: '100',
    INGEST_RETRY_MS: '20',
    REDIS_RECONNECT_MAX_MS: '100',
  };
}

/** Resolves when the worker has booted (its URL) or exited (undefined); fails, naming the step, past its budget. */
async function booted(child: ChildProcess): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const overdue = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`worker ${child.pid} did not boot within ${WORKER_BOOT_BUDGET_MS} ms`)),
      WORKER_BOOT_BUDGET_MS,
    );
  });
  try {
    return await Promise.race([bootOf.get(child)!, overdue]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a fault test's source does; the scenario around it (runFaultScenario) is the same for every source. */
export interface FaultSource {
  /** The body of `PUT /admin/ingest/events`. */
  declaration: Record<string, unknown>;
  /** Stores payloads in the stream, retried until stored (the server may be restarting): their ids, as dead letters name them. */
  send(payloads: string[], first: number): Promise<string[]>;
  /** The server's fault, once mid-run: a restart (or every node's script cache flushed). */
  fault(): Promise<void>;
  /** True once all `count` messages were delivered and acknowledged. */
  drained(count: number): Promise<boolean>;
  /** What the source holds (its group's or consumer's counts), for a drain that never ends. */
  state?(): Promise<unknown>;
  /** The message ids every dead letter written names (a message dead-lettered twice shows twice). */
  deadLetterIds(): Promise<string[]>;
  /**
   * Makes the source deliver again every message after `ids[from - 1]` (all applied and acknowledged
   * by then): what a crash between every apply and its acknowledgement would do, for sure.
   */
  rewind?(from: number, ids: string[]): Promise<void>;
  /**
   * The dead letters a rewind writes again are dropped as duplicates (JetStream's duplicate window):
   * each invalid message is then still in the dead letters exactly once. False: written again (a
   * Redis stream: a rewound group is not a crash, its entries are pending again).
   */
  deadLettersOnceAfterRewind?: boolean;
}

export interface FaultScenario {
  /** The workers' environment (their Redis, KEY_PREFIX, ADMIN_TOKEN, INGEST_*). */
  env: Record<string, string>;
  /** The test's own connection: boards and totals are read with it. */
  client: Redis | Cluster;
  prefix: string;
  source: FaultSource;
  /** Checks once the boards and the source are declared (before any message is sent). */
  declared?: () => Promise<void>;
}

/**
 * The fault test every source runs: the boards and the source declared, `messages` messages sent in
 * ~60 chunks while the chaos runs (the consuming instance SIGKILLed at random points three times and
 * started again, a second instance joining and leaving, the server's fault once), then, once the
 * source is drained: the boards equal a brute-force count byte for byte, every invalid message is in
 * the dead letters exactly once, and the kills fell while messages were being applied.
 */
export async function runFaultScenario(scenario: FaultScenario): Promise<{ messages: FaultMessage[] }> {
  const { client, prefix, source } = scenario;
  const first = await declaredByFirst(scenario);
  const messages = faultMessages(FAULT_MESSAGES);
  const ids: string[] = [];
  const produce = (async () => {
    const chunk = Math.max(100, Math.ceil(messages.length / 60));
    for (let from = 0; from < messages.length; from += chunk) {
      const payloads = messages.slice(from, from + chunk).map((m) => m.payload);
      ids.push(...(await source.send(payloads, from)));
      await sleep(100);
    }
  })();
  const applied = async () => Number(await client.hget(`{${prefix}ingest}:stats:events`, 'applied'));
  // At a kill: messages sent that the source has not yet delivered and seen acknowledged (work under way).
  const { workers, running, appliedAtKills } = await chaos({ env: scenario.env, source, first, produce, applied });

  try {
    await waitFor('the source to be drained', () => source.drained(messages.length), DRAIN_BUDGET_MS).catch(
      async (error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(await stateOf(scenario, workers, ids.length))}`);
      },
    );
    // The instance the chaos left running stays: drained, it applies nothing more, and the rewinds
    // below deliver the last tenth again to it (a fresh instance would cost a boot, ~2 CPU s).
    expect(await storedBoards(client, prefix)).toEqual(expectedBoards(messages));
    const invalidIds = ids.filter((_, i) => !messages[i].valid);
    expect((await source.deadLetterIds()).sort()).toEqual(invalidIds.sort());
    expect(appliedAtKills.some((count) => count > 0 && count < messages.length)).toBe(true);
    if (source.rewind) await deliveredAgain(scenario, messages, ids, invalidIds, running);
  } finally {
    // Also when a step fails: a worker left running would outlive the test (and its Redis).
    for (const worker of workers) await stopWorker(worker, 'SIGKILL');
  }
  return { messages };
}

/**
 * The first instance, booted, with the boards and the source declared on its routes (an app of the
 * test's own would cost a boot in Jest's module registry): it then consumes what it declared.
 */
async function declaredByFirst(scenario: FaultScenario): Promise<ChildProcess> {
  const first = startWorker(scenario.env);
  try {
    await declare(scenario, first);
  } catch (error) {
    await stopWorker(first, 'SIGKILL');
    throw error;
  }
  return first;
}

/** The boards and the source declared through the routes of the booted `worker`, then the scenario's own checks. */
async function declare({ env, source, declared }: FaultScenario, worker: ChildProcess): Promise<void> {
  const url = await booted(worker);
  if (url === undefined) throw new Error(`worker ${worker.pid} exited before it booted`);
  const admin = { Authorization: `Bearer ${env.ADMIN_TOKEN}` };
  for (const { name, shards } of FAULT_BOARDS)
    await request(url)
      .put(`/admin/boards/${name}`)
      .set(admin)
      .send({ windows: [{ name: FAULT_WINDOW, period: '1h', interval: '1m' }], shards })
      .expect(201);
  await request(url).put('/admin/ingest/events').set(admin).send(source.declaration).expect(201);
  await declared?.();
}

/** What the source, its lease and totals and the workers held when a drain never ended: the failure says why. */
async function stateOf(scenario: FaultScenario, workers: ChildProcess[], sent: number): Promise<unknown> {
  const { client, prefix, source } = scenario;
  const tag = `{${prefix}ingest}`;
  return {
    sent,
    stats: await client.hgetall(`${tag}:stats:events`),
    lease: { holder: await client.get(`${tag}:lease:events`), ttlMs: await client.pttl(`${tag}:lease:events`) },
    held: await source.state?.().catch((cause: unknown) => String(cause)),
    processes: workers.map((w) => ({ pid: w.pid, exitCode: w.exitCode, signal: w.signalCode })),
  };
}

/**
 * The kills fall between an apply and its acknowledgement only by chance: the messages of a rewind,
 * delivered again, must all be recognised and skipped: the boards unchanged, and the dead letters
 * once more for their invalid messages (once in all where the source drops a second copy): they
 * were delivered again, not passed over. The last tenth to the running instance (its applied total
 * unchanged), then the last fiftieth to a fresh consumer, as an instance booted on a rewound group
 * starts it, without a boot: the source deleted on the running instance (its runner stops and gives
 * up the lease), set back, and declared again there. A new runner, source connection and lease epoch
 * start on the rewound group (claiming what is pending, then reading on): the new totals apply nothing.
 */
async function deliveredAgain(
  scenario: FaultScenario,
  messages: FaultMessage[],
  ids: string[],
  invalidIds: string[],
  running: ChildProcess,
): Promise<void> {
  const { client, prefix, source, env } = scenario;
  const applied = () => client.hget(`{${prefix}ingest}:stats:events`, 'applied');
  const deadLetters = [...invalidIds];
  const skippedAgain = async (share: number, drained: string, declaredAgain = async () => {}) => {
    const from = Math.floor(messages.length * (1 - share));
    await source.rewind!(from, ids);
    await declaredAgain();
    await waitFor(drained, () => source.drained(messages.length), DRAIN_BUDGET_MS);
    expect(await storedBoards(client, prefix)).toEqual(expectedBoards(messages));
    if (!source.deadLettersOnceAfterRewind) deadLetters.push(...ids.filter((_, i) => i >= from && !messages[i].valid));
    expect((await source.deadLetterIds()).sort()).toEqual(deadLetters.sort());
  };
  const appliedBefore = await applied();
  await skippedAgain(0.1, 'the source to be drained again');
  expect(await applied()).toBe(appliedBefore);

  const url = await booted(running);
  if (url === undefined) throw new Error(`worker ${running.pid} exited before the rewinds`);
  const admin = { Authorization: `Bearer ${env.ADMIN_TOKEN}` };
  await request(url).delete('/admin/ingest/events').set(admin).expect(204);
  await skippedAgain(0.02, 'the source to be drained again by a fresh consumer', async () => {
    await request(url).put('/admin/ingest/events').set(admin).send(source.declaration).expect(201);
  });
  expect(Number(await applied())).toBe(0);
}

interface Chaos {
  env: Record<string, string>;
  /** The instance consuming when the chaos begins. */
  first: ChildProcess;
  produce: Promise<void>;
  /** Its fault() falls once, after the second kill. */
  source: FaultSource;
  /** How many events were applied so far (the source's totals). */
  applied: () => Promise<number>;
}

interface ChaosDone {
  workers: ChildProcess[];
  /** The instance left running: the first, started again after its last kill. */
  running: ChildProcess;
  appliedAtKills: number[];
}

/**
 * The chaos of a fault test while `produce` sends the messages: the first instance killed (SIGKILL)
 * at a random point of its work three times and started again, a second instance joining after the
 * first kill and leaving (SIGTERM) after the second, and the server's fault then. `applied` is read
 * just before each kill, so the test can check that a kill fell while work was under way.
 */
async function chaos({ env, first: consuming, produce, source, applied }: Chaos): Promise<ChaosDone> {
  let first = consuming;
  let second: ChildProcess | undefined;
  const workers = [first];
  const appliedAtKills: number[] = [];
  for (let kill = 0; kill < 3; kill++) {
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
      await source.fault();
    }
  }
  await produce;
  return { workers, running: first, appliedAtKills };
}
