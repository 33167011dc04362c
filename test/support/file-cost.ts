/**
 * TEST_COST_FILE=<path>: each test file appends one JSON line there — its wall seconds, the CPU seconds
 * of its Jest worker, and the CPU seconds its worker's shared Redis servers spent meanwhile (INFO cpu;
 * nothing for a file's own servers). On a machine whose load moves timings by half, CPU seconds still
 * compare two versions of a file, and they show where a run's time goes (test/support/quiet-environment.ts).
 */
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import Redis from 'ioredis';
import { workerServers } from '../../harness/worker-servers';

export interface FileCostStart {
  wallMs: number;
  cpu: NodeJS.CpuUsage;
  redisCpuSec: number;
}

/** used_cpu_user + used_cpu_sys of every server of this worker. */
async function redisCpuSec(): Promise<number> {
  const servers = workerServers();
  const addresses = [servers?.url.replace('redis://', ''), ...(servers?.nodes.split(',') ?? [])].filter(Boolean);
  let total = 0;
  for (const address of addresses as string[]) {
    const [host, port] = address.split(':');
    const client = new Redis({ host, port: Number(port), lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      const info = await client.info('cpu');
      for (const field of ['used_cpu_user', 'used_cpu_sys'])
        total += Number(new RegExp(`${field}:([0-9.]+)`).exec(info)?.[1] ?? 0);
    } finally {
      client.disconnect();
    }
  }
  return total;
}

export async function startFileCost(): Promise<FileCostStart> {
  return { wallMs: performance.now(), cpu: process.cpuUsage(), redisCpuSec: await redisCpuSec() };
}

export async function recordFileCost(outFile: string, testPath: string, start: FileCostStart): Promise<void> {
  const cpu = process.cpuUsage(start.cpu);
  const line = {
    file: relative(process.cwd(), testPath),
    wallSec: (performance.now() - start.wallMs) / 1000,
    workerCpuSec: (cpu.user + cpu.system) / 1e6,
    redisCpuSec: (await redisCpuSec()) - start.redisCpuSec,
  };
  appendFileSync(outFile, `${JSON.stringify(line)}\n`);
}
