/**
 * With WORST_CASE_SEED_LOG=<path>, each seeding step's cost appended there: its wall time, this process's
 * CPU and Redis's main thread's, the function calls sent to Redis and the commands it ran (a script's own
 * too): where seeding's time goes.
 */
import { appendFileSync } from 'node:fs';
import type { RedisMeter } from './redis-meter';

export async function loggedStep<T>(meter: RedisMeter | undefined, name: string, work: () => Promise<T>): Promise<T> {
  const path = process.env.WORST_CASE_SEED_LOG;
  if (!path || !meter) return work();
  const [startMs, here, redisMs, commands] = [
    performance.now(),
    process.cpuUsage(),
    await meter.cpuMs(),
    await meter.commandCounts(),
  ];
  const result = await work();
  const { user, system } = process.cpuUsage(here);
  const after = await meter.commandCounts();
  const figures = [performance.now() - startMs, (user + system) / 1000, (await meter.cpuMs()) - redisMs];
  const line = [
    ...figures.map((ms) => ms.toFixed(0)),
    after.calls - commands.calls,
    after.commands - commands.commands,
    name,
  ];
  appendFileSync(path, `${line.join('\t')}\n`);
  return result;
}
