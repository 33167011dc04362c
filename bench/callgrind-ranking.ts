/**
 * The setup the instruction benches share: a redis-server under callgrind (./redis-instructions.ts)
 * and the ranking graph composed over it, at a fixed fake time (`settings`: the config's, as the
 * environment names them; `valgrindArgs`: startCallgrindRedis's); stopped after `run`.
 */
import { readFileSync } from 'node:fs';
import Redis, { type Command } from 'ioredis';
import { composeRanking, type RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { stopChild } from '../harness/processes';
import { validateConfig } from '../src/common/config';
import { RedisFunctions } from '../src/redis/redis-functions';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { dumpCounts, startCallgrindRedis, type Callgrind } from './redis-instructions';

export interface CallgrindRanking {
  server: Callgrind;
  /** A plain connection of its own (CONFIG, SLOWLOG, INFO). */
  redis: Redis;
  graph: RankingGraph;
  clock: FakeClock;
}

export async function withCallgrindRanking(
  startMs: number,
  run: (bench: CallgrindRanking) => Promise<void>,
  settings: Record<string, string> = {},
  valgrindArgs: string[] = [],
): Promise<void> {
  const server = await startCallgrindRedis([], valgrindArgs);
  const clock = new FakeClock(startMs);
  // Valgrind runs Redis about 50 times slower, and perFcall sends calls one at a time, each between two
  // dumps: a call waits behind the others sent with it (a settle round's, one a shard), past the
  // setting's most (60 s) at a load of 30. The calls get a bench's deadline, beyond what the setting takes.
  const config = { ...validateConfig({ ...settings, REDIS_URL: server.url }), REDIS_COMMAND_TIMEOUT_MS: 600_000 };
  const service = new RedisService(RedisSettings.from(config), clock);
  const redis = new Redis(server.url);
  try {
    await service.waitUntilReady(60_000);
    const graph = await composeRanking(service, new RedisFunctions(service), config, clock);
    await run({ server, redis, graph, clock });
  } finally {
    redis.disconnect();
    await service.onApplicationShutdown();
    await stopChild(server.child);
  }
}

/** Each FCALL's instructions while `read` runs (the counters dumped around each call). */
export async function perCall(
  server: Callgrind,
  functions: RedisFunctions,
  read: () => Promise<unknown>,
): Promise<number[]> {
  const counted: number[] = [];
  const call = functions.call.bind(functions);
  functions.call = (async (...args: Parameters<typeof call>) => {
    dumpCounts(server);
    try {
      return await call(...args);
    } finally {
      counted.push(dumpCounts(server).counts.Ir);
    }
  }) as typeof call;
  try {
    await read();
  } finally {
    functions.call = call;
  }
  return counted;
}

/** One FCALL sent while perFcall's `run` ran: its function's name, instructions and callgrind dump. */
export interface CountedFcall {
  name: string;
  /** Everything the dump counted: the call, and whatever ran meanwhile (serverCron, another thread). */
  ir: number;
  /** The FCALL's own instructions (fcallInstructions): what it held Redis's main thread for. */
  own: number;
  file: string;
  /** perFcall's `probe` true before or after the call (absent: no probe). */
  staged?: boolean;
}

/** Ids callgrind gave `fcallCommand` / `fcallroCommand` in the dumps read so far (a name is written out with its id once). */
const FCALL_IDS = new Set<string>();

/**
 * The instructions of the FCALLs a callgrind dump counted, each call into fcallCommand (fcallroCommand) inclusive (the
 * cost line after its `calls=` line): without serverCron (its jemalloc statistics run up to 3 M
 * instructions), a background thread's frees or purges, or the client's reading, which land in the dump
 * as they land between its two ends.
 */
export function fcallInstructions(file: string): number {
  let total = 0;
  let intoFcall = false;
  let costLine = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (costLine) {
      if (intoFcall) total += Number(line.split(' ')[1]);
      costLine = false;
    } else if (line.startsWith('calls=')) costLine = true;
    else if (line.startsWith('fn=') || line.startsWith('cfn=')) {
      const [, called, id, name] = /^(c?)fn=\((\d+)\)(?: (.*))?$/.exec(line) ?? [];
      // FCALL_RO runs fcallroCommand: a read-only call counted as 0 otherwise.
      if (name === 'fcallCommand' || name === 'fcallroCommand') FCALL_IDS.add(id);
      intoFcall = called === 'c' && FCALL_IDS.has(id);
    }
  }
  return total;
}

/**
 * Each FCALL sent while `run` runs (the counters dumped before it is sent and once it answered). Per
 * FCALL, not per functions.call: a call left at a snapshot boundary (TB_CROSSING) is sent again by the
 * same functions.call. FCALLs sent together (the expiry's, one per metric and shard) go one at a time:
 * dumps around calls Redis runs back to back would credit one call with another's work, or none.
 * `probe`, asked after each FCALL, marks the calls it answered true after (`staged`).
 */
export async function perFcall(
  server: Callgrind,
  run: () => Promise<unknown>,
  probe?: () => Promise<boolean>,
): Promise<CountedFcall[]> {
  const counted: CountedFcall[] = [];
  const proto = Redis.prototype;
  const send = proto.sendCommand;
  let previous: Promise<unknown> = Promise.resolve();
  proto.sendCommand = function (this: Redis, command: Command, stream?: Parameters<typeof send>[1]) {
    if (!/^fcall/i.test(command.name)) return send.call(this, command, stream);
    const done = () => {
      const { counts, file } = dumpCounts(server);
      counted.push({ name: String(command.args[0]), ir: counts.Ir, own: fcallInstructions(file), file });
    };
    previous = previous.then(async () => {
      dumpCounts(server);
      void send.call(this, command, stream);
      await command.promise.then(done, done);
      // Probed outside the dumps: its commands are no call's.
      if (probe) counted[counted.length - 1].staged = await probe();
    });
    return command.promise;
  };
  try {
    await run();
  } finally {
    proto.sendCommand = send;
  }
  return counted;
}
