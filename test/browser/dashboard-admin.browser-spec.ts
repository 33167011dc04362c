import { join } from 'node:path';
import Redis from 'ioredis';
import { ADMIN, ADMIN_TOKEN } from '../../harness/app';
import { describeInBrowser, SHOTS, useDashboard } from '../support/dashboard-browser';

describeInBrowser("the dashboard's stream ingest and retraction panels", () => {
  const world = useDashboard();
  const { http, newPage } = world;

  it('shows each stream source with its lag, applied and dead-lettered events and throughput, moving (and no last error)', async () => {
    await http()
      .put('/admin/boards/ingested')
      .set(ADMIN)
      .send({ windows: [{ name: 'hour', period: '1h', interval: '5m' }] })
      .expect(201);
    const stream = world.redis.client as Redis;
    const add = (count: number, payload = '{"item":"i-1"}') =>
      Promise.all(Array.from({ length: count }, () => stream.xadd('clicks', '*', 'event', payload)));
    await add(5);
    await http()
      .put('/admin/ingest/clicks')
      .set(ADMIN)
      .send({ kind: 'redis-stream', stream: 'clicks', board: 'ingested' })
      .expect(201);
    const { page, errors } = await newPage();
    await page.goto(`${world.base}/dashboard`);
    await page.fill('#token', ADMIN_TOKEN);
    await page.dispatchEvent('#token', 'change');
    const cell = (name: string) => page.locator(`#ingest-sources tr[data-source="clicks"] .${name}`);
    await page.waitForFunction(
      () => document.querySelector('#ingest-sources tr[data-source="clicks"] .applied')?.textContent === '5',
      undefined,
      { timeout: 10_000 },
    );
    expect(await cell('dead').textContent()).toBe('0');

    // A steady flow with one bad entry: applied and dead-lettered move, the throughput shows, the lag drains.
    let flowing = true;
    const flow = (async () => {
      for (let sent = 0; flowing && sent < 200; sent++) {
        await add(10);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    await add(1, 'not json');
    try {
      await page.waitForFunction(
        () => {
          const row = document.querySelector('#ingest-sources tr[data-source="clicks"]');
          const value = (name: string) => Number(row?.querySelector(`.${name}`)?.textContent);
          return value('applied') > 5 && value('dead') === 1 && value('throughput') > 0;
        },
        undefined,
        { timeout: 15_000 },
      );
    } finally {
      flowing = false;
      await flow;
    }
    await page.waitForFunction(
      () => document.querySelector('#ingest-sources tr[data-source="clicks"] .lag')?.textContent === '0',
      undefined,
      { timeout: 10_000 },
    );
    expect(Number(await cell('applied').textContent())).toBe(Number(await stream.xlen('clicks')) - 1);
    expect(await page.locator('#ingest-sources tr[data-source="clicks"] td').nth(1).textContent()).toBe('Redis clicks');
    await page.screenshot({ path: join(SHOTS, 'dashboard-ingest.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('starts a retraction of an actor and shows it to its end, with what it took out', async () => {
    await http()
      .put('/admin/boards/acted')
      .set(ADMIN)
      .send({ windows: [{ name: 'hour', period: '1h', interval: '5m' }], actors: true })
      .expect(201);
    for (const [item, amount, actor] of [
      ['x', 5, 'spam'],
      ['y', 3, 'spam'],
      ['x', 2, 'ann'],
    ] as const)
      await http().post(`/boards/acted/items/${item}/increment`).send({ amount, actor }).expect(200);
    const { page, errors } = await newPage();
    await page.goto(`${world.base}/dashboard`);
    await page.fill('#token', ADMIN_TOKEN);
    await page.dispatchEvent('#token', 'change');
    await page.fill('#retract-board', 'acted');
    await page.fill('#retract-actor', 'spam');
    await page.fill('#retract-block', '1h');
    await page.click('#retract-form button');
    await page.waitForFunction(
      () => document.querySelector('#retractions-list tbody tr .state')?.textContent === 'done',
      undefined,
      { timeout: 10_000 },
    );
    const row = page.locator('#retractions-list tbody tr').first();
    expect(await row.locator('.actor').textContent()).toBe('spam');
    expect(await row.locator('.events').textContent()).toBe('2');
    expect(await row.locator('.amount').textContent()).toBe('8');
    const top = await http().get('/boards/acted/top').expect(200);
    expect(top.body.items.map((r: { item: string; score: number }) => [r.item, r.score])).toEqual([['x', 2]]);
    await http().post('/boards/acted/items/x/increment').send({ actor: 'spam' }).expect(403);
    await page.screenshot({ path: join(SHOTS, 'dashboard-retractions.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });
});
