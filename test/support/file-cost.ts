/**
 * TEST_COST_FILE=<path>: each test file appends one JSON line there — its wall seconds, the CPU seconds
 * of its Jest worker, and the CPU seconds and commands its worker's shared Redis servers spent meanwhile
 * (INFO cpu and stats, a script's own calls counted; nothing for a file's own servers). On a machine
 * whose load moves timings by half, CPU seconds still compare two versions of a file, and the commands
 * do not move at all; they show where a run's time goes (test/support/quiet-environment.ts).
 * Also the worker CPU until the file's tests start (loading and compiling its modules, collecting its
 * tests), the apps it booted with the CPU their boots took (harness/app.ts counts them), and the CPU of
 * the child processes it ran to their end (a spawned service, npm, tsc, a file's own redis-server):
 * on Linux, from /proc (cutime + cstime), none elsewhere.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import Redis from 'ioredis';
import { workerServers } from '../../harness/worker-servers';

export interface FileCostStart {
  wallMs: number;
  cpu: NodeJS.CpuUsage;
  redis: RedisWork;
  childCpuSec: number;
  /** Worker CPU seconds from the start until the file's first test ran (set by the environment). */
  loadCpuSec?: number;
}

/** What harness/app.ts counts in a test file's global: its app boots and their CPU seconds. */
export const APP_BOOTS = Symbol.for('trendboard.appBoots');
export interface AppBoots {
  count: number;
  cpuSec: number;
}

const cpuSec = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1e6;
/** Linux's clock ticks a second (USER_HZ), the unit of /proc/<pid>/stat's times. */
const TICKS_PER_SEC = 100;

/** CPU seconds of this process's ended and waited-for children (their children's too); 0 off Linux. */
function childCpuSec(): number {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return 0;
  }
  // After the command's closing parenthesis: field 3 (state) first; cutime and cstime are fields 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SEC;
}

export function markLoaded(start: FileCostStart): void {
  start.loadCpuSec ??= cpuSec(process.cpuUsage(start.cpu));
}

/** What the worker's shared servers did so far: CPU seconds, and commands (a script's own calls included). */
interface RedisWork {
  cpuSec: number;
  commands: number;
}

/** used_cpu_user + used_cpu_sys and total_commands_processed of every server of this worker. */
async function redisWork(): Promise<RedisWork> {
  const servers = workerServers();
  const addresses = [servers?.url.replace('redis://', ''), ...(servers?.nodes.split(',') ?? [])].filter(Boolean);
  const total = { cpuSec: 0, commands: 0 };
  const field = (info: string, name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  for (const address of addresses as string[]) {
    const [host, port] = address.split(':');
    const client = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      const info = await client.info();
      total.cpuSec += field(info, 'used_cpu_user') + field(info, 'used_cpu_sys');
      total.commands += field(info, 'total_commands_processed');
    } finally {
      client.disconnect();
    }
  }
  return total;
}

export async function startFileCost(): Promise<FileCostStart> {
  return {
    wallMs: performance.now(),
    cpu: process.cpuUsage(),
    redis: await redisWork(),
    childCpuSec: childCpuSec(),
  };
}

export async function recordFileCost(
  outFile: string,
  testPath: string,
  start: FileCostStart,
  boots: AppBoots = { count: 0, cpuSec: 0 },
): Promise<void> {
  const [wallMs, worker, redis] = [performance.now(), process.cpuUsage(start.cpu), await redisWork()];
  const line = {
    file: relative(process.cwd(), testPath),
    wallSec: (wallMs - start.wallMs) / 1000,
    workerCpuSec: cpuSec(worker),
    redisCpuSec: redis.cpuSec - start.redis.cpuSec,
    redisCommands: redis.commands - start.redis.commands,
    childCpuSec: childCpuSec() - start.childCpuSec,
    loadCpuSec: start.loadCpuSec,
    appBoots: boots.count,
    appBootCpuSec: boots.cpuSec,
  };
  appendFileSync(outFile, `${JSON.stringify(line)}\n`);
}
