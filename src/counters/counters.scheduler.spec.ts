import { SchedulerRegistry } from '@nestjs/schedule';
import { JobRegistry } from '../common/jobs';
import { CountersScheduler } from './counters.scheduler';
import { CleanPassResult, CountersService, emptyCleanPass } from './counters.service';

function schedulerWith(cleanPass: (pass: number) => Promise<CleanPassResult>) {
  // The scheduler's own logic only: a service whose clean pass the test decides (no Redis involved).
  const service: CountersService = Object.assign(Object.create(CountersService.prototype), {
    cleanPass,
    settings: { cleanIntervalMs: 60_000, schedulerEnabled: false },
  });
  const jobs = new JobRegistry();
  const scheduler = new CountersScheduler(service, new SchedulerRegistry(), jobs);
  return { scheduler, jobs };
}

const ok = (pass: number, extra: Partial<CleanPassResult> = {}): CleanPassResult => ({
  ...emptyCleanPass(pass),
  ...extra,
});

describe('CountersScheduler', () => {
  it('numbers its passes from 0, adds up what they removed, and registers its stats', async () => {
    const passes: number[] = [];
    const { scheduler, jobs } = schedulerWith(async (pass) => {
      passes.push(pass);
      return ok(pass, { slicesRemoved: 2, entriesRemoved: 1, failures: pass === 1 ? 1 : 0 });
    });
    await scheduler.tick();
    await scheduler.tick();
    await scheduler.tick();
    expect(passes).toEqual([0, 1, 2]);
    expect(scheduler.nextPass).toBe(3);
    expect(scheduler.stats).toMatchObject({ runs: 3, passes: 3, failures: 1, slicesRemoved: 6, entriesRemoved: 3 });
    expect(jobs.entries().map(([name]) => name)).toEqual(['counters-cleaner']);
  });

  it('never overlaps: a tick during a pass joins it', async () => {
    let release: () => void = () => undefined;
    let calls = 0;
    const { scheduler } = schedulerWith(async (pass) => {
      calls++;
      await new Promise<void>((resolve) => (release = resolve));
      return ok(pass);
    });
    const first = scheduler.tick();
    const second = scheduler.tick();
    expect(second).toBe(first);
    release();
    await first;
    expect(calls).toBe(1);
  });

  it('logs and counts a failed pass and keeps going', async () => {
    let fail = true;
    const { scheduler } = schedulerWith(async (pass) => {
      if (fail) throw new Error('Redis is down');
      return ok(pass);
    });
    jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    await expect(scheduler.tick()).resolves.toBeUndefined();
    expect(scheduler.stats).toMatchObject({ runs: 1, failures: 1, passes: 0 });
    fail = false;
    await expect(scheduler.tick()).resolves.toMatchObject({ pass: 1 });
    expect(scheduler.stats).toMatchObject({ runs: 2, failures: 1, passes: 1 });
  });
});
