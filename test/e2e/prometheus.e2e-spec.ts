import { spawnSync } from 'node:child_process';
import { RankingScheduler } from '../../src/ranking/expiry/ranking.scheduler';
import { RedisService } from '../../src/redis/redis.service';
import { createBoard } from '../../harness/app';
import { useSingleNodeApp } from '../support/e2e';
import { until } from '../support/until';

/** promtool from PATH (Debian's `prometheus` package); .ci/run sets REQUIRE_PROMTOOL once it installed it. */
const promtool = spawnSync('promtool', ['--version']).status === 0;
if (!promtool && process.env.REQUIRE_PROMTOOL) {
  throw new Error('REQUIRE_PROMTOOL is set but promtool is not on PATH (apt-get install prometheus)');
}

describe('/metrics for an operator', () => {
  const e2e = useSingleNodeApp({ ownRedis: true, env: { RATE_LIMIT_PER_SEC: '1', RATE_LIMIT_BURST: '2' } });
  const { clock, http } = e2e;

  beforeAll(async () => {
    await createBoard(e2e.app(), 'scraped');
    // Two writes within the burst, one refused; a keyed write and its replay; a bad request.
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push(
        (await http().post('/boards/scraped/items/a/increment').set('Content-Type', 'application/json')).status,
      );
    expect(statuses).toEqual([200, 200, 429]);
    clock.advanceMs(10_000);
    for (let i = 0; i < 2; i++)
      await http()
        .post('/boards/scraped/items/a/increment')
        .set('Content-Type', 'application/json')
        .set('Idempotency-Key', 'k-1')
        .expect(200);
    clock.advanceMs(10_000);
    await http().post('/boards/scraped/items/a/increment').send({ amount: 0 }).expect(400);
    await e2e.app().get(RankingScheduler).tick();
  });

  const scrape = async () => (await http().get('/metrics').expect(200)).text;

  const checkTitle = 'passes `promtool check metrics` with nothing to report';
  // Without promtool the test is skipped, its title saying why; CI (REQUIRE_PROMTOOL) fails above instead.
  (promtool ? it : it.skip)(
    promtool ? checkTitle : `${checkTitle}: skipped, no promtool on PATH (apt-get install prometheus)`,
    async () => {
      const checked = spawnSync('promtool', ['check', 'metrics'], { input: await scrape(), encoding: 'utf8' });
      expect({ status: checked.status, out: checked.stdout + checked.stderr }).toEqual({ status: 0, out: '' });
    },
  );

  it('counts job passes as counters and tells when each job last succeeded', async () => {
    const text = await scrape();
    expect(text).toMatch(/# TYPE trendboard_job_runs_total counter/);
    expect(text).toMatch(/trendboard_job_runs_total\{job="ranking-expiry"\} 1\n/);
    expect(text).toMatch(/trendboard_job_failures_total\{job="ranking-expiry"\} 0\n/);
    const success = /trendboard_job_last_success_timestamp_seconds\{job="ranking-expiry"\} ([\d.e+]+)/.exec(text);
    expect(Math.abs(Number(success?.[1]) - clock.nowMs() / 1000)).toBeLessThan(5);
    // A job that never ran has no success time yet.
    expect(text).not.toMatch(/trendboard_job_last_success_timestamp_seconds\{job="counters-cleaner"\}/);
    expect(
      Number(/trendboard_job_seconds_since_success\{job="ranking-expiry"\} ([\d.e+-]+)/.exec(text)?.[1]),
    ).toBeLessThan(60);
    expect(text).toMatch(/trendboard_job_backlog\{job="ranking-expiry"\} 0\n/);
  });

  it('reports Redis: up, command latency by command, errors by kind, commands pending', async () => {
    // Background work (the app's own timers) may have commands in flight at one scrape: the gauge must
    // come back to 0 once they are answered.
    const idle = /^trendboard_redis_pending_commands 0$/m;
    const text = await until('no Redis command pending', async () => {
      const scraped = await scrape();
      return idle.test(scraped) ? scraped : undefined;
    });
    expect(text).toMatch(/^trendboard_redis_up 1$/m);
    expect(text).toMatch(/trendboard_redis_command_duration_seconds_count\{command="tbRankIncrement"\} [1-9]/);
    expect(text).toMatch(/# TYPE trendboard_redis_command_errors_total counter/);
  });

  it('counts refusals by code, replays and requests in flight', async () => {
    const text = await scrape();
    expect(text).toMatch(/trendboard_http_error_answers_total\{code="RATE_LIMITED"\} 1/);
    expect(text).toMatch(/trendboard_http_error_answers_total\{code="INVALID_INPUT"\} 1/);
    expect(text).toMatch(/^trendboard_idempotency_replays_total 1$/m);
    // The scrape itself is the one request in flight while the registry is read.
    expect(text).toMatch(/^trendboard_http_requests_in_flight 1$/m);
  });

  it('says Redis is down (0) while it is, with the connection errors it caused', async () => {
    if (!e2e.redis().pause || !e2e.redis().resume) return; // a shared REDIS_URL cannot be stopped from here
    await e2e.redis().pause!();
    await http().get('/boards').expect(503);
    const text = await scrape();
    expect(text).toMatch(/^trendboard_redis_up 0$/m);
    expect(text).toMatch(/trendboard_redis_command_errors_total\{kind="connection"\} [1-9]/);
    expect(text).toMatch(/trendboard_http_error_answers_total\{code="REDIS_UNAVAILABLE"\} 1/);
    await e2e.redis().resume!();
    expect(await e2e.app().get(RedisService).waitUntilReady(5000)).toBe(true);
    expect(await scrape()).toMatch(/^trendboard_redis_up 1$/m);
  });
});
