/**
 * Measuring calls inside one redis-server, shared by bench/functions.ts and bench/functions-ranking.ts:
 * INFO commandstats usec_per_call after CONFIG RESETSTAT (time inside the command, no network) and the
 * Redis main thread's CPU time per call (INFO cpu: reading and answering included, but not inflated
 * when other processes take the CPU, as wall time is on a shared machine). Variants are measured in
 * interleaved rounds, so a busy spell of the machine hits every variant alike.
 */
import { readFileSync } from 'node:fs';
import Redis from 'ioredis';

export type Pipeline = ReturnType<Redis['pipeline']>;

export interface Variant {
  name: string;
  /** The command whose commandstats row is read (evalsha, fcall, fcall_ro). */
  command: 'evalsha' | 'fcall' | 'fcall_ro' | 'hmget';
  /** Queues the variant's `n`th call. */
  send: (pipeline: Pipeline, n: number) => void;
  /** µs per call inside Redis (commandstats), one entry per measured round. */
  rounds: number[];
  /** Redis main-thread CPU µs per call, one entry per measured round. */
  cpu: number[];
}

export function variant(name: string, command: Variant['command'], send: Variant['send']): Variant {
  return { name, command, send, rounds: [], cpu: [] };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** usec_per_call of one command in INFO commandstats (0 when it was not called). */
export async function usecPerCall(redis: Redis, command: string): Promise<number> {
  const stats = await redis.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=\\d+,usec=\\d+,usec_per_call=([\\d.]+)`).exec(stats)?.[1] ?? 0);
}

/** Microseconds inside Redis of every script or function call since the last reset (INFO commandstats text), and their count. */
export function scriptCallTime(commandstats: string): { calls: number; usec: number } {
  let calls = 0;
  let usec = 0;
  for (const match of commandstats.matchAll(/^cmdstat_(?:evalsha|eval|fcall|fcall_ro):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(match[1]);
    usec += Number(match[2]);
  }
  return { calls, usec };
}

/** CPU seconds the Redis main thread has used (user + system). */
export async function mainThreadCpu(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? NaN);
  return field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread');
}

/** One round of a variant: CONFIG RESETSTAT, `calls` calls pipelined `pipelined` at a time; [µs, CPU µs] per call. */
async function round(redis: Redis, v: Variant, calls: number, pipelined: number): Promise<[number, number]> {
  await redis.config('RESETSTAT');
  const cpuBefore = await mainThreadCpu(redis);
  for (let sent = 0; sent < calls; sent += pipelined) {
    const pipeline = redis.pipeline();
    for (let i = 0; i < pipelined; i++) v.send(pipeline, sent + i);
    const results = (await pipeline.exec()) ?? [];
    const failed = results.find(([error]) => error);
    if (failed) throw failed[0];
  }
  const cpuMicros = ((await mainThreadCpu(redis)) - cpuBefore) * 1e6;
  return [await usecPerCall(redis, v.command), cpuMicros / calls];
}

/** `rounds` rounds of every variant in turn, after one warm-up round that is not kept. */
export async function measure(
  redis: Redis,
  variants: Variant[],
  { rounds, calls, pipelined }: { rounds: number; calls: number; pipelined: number },
): Promise<void> {
  for (let r = 0; r <= rounds; r++) {
    for (const v of variants) {
      const [micros, cpu] = await round(redis, v, calls, pipelined);
      if (r === 0) continue;
      v.rounds.push(micros);
      v.cpu.push(cpu);
    }
  }
}

/** The 1, 5 and 15 minute load averages, as /proc/loadavg has them. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** One line per variant: its median Redis time per call (commandstats) and main-thread CPU per call. */
export function printVariants(variants: readonly Variant[]): void {
  for (const v of variants)
    console.log(`${v.name}: ${median(v.rounds).toFixed(1)} µs commandstats, ${median(v.cpu).toFixed(1)} CPU µs`);
}
