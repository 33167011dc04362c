import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Browser, chromium, Page } from 'playwright-core';
import request from 'supertest';
import { FakeClock } from '../support/clock';
import { ADMIN, ADMIN_TOKEN, startTestApp } from '../support/app';
import { startTestRedis, TestRedis } from '../support/redis';

/** Debian's chromium (.ci/run installs it); never a downloaded browser. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const MINUTE_MS = 60_000;
/** Where the screenshots go: docs/ when refreshing the README's (DASHBOARD_SCREENSHOTS_DIR=docs), else a temp dir. */
const SHOTS = process.env.DASHBOARD_SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), 'dashboard-'));

/** Without Debian's chromium the test skips, saying why; CI (REQUIRE_CHROMIUM=1, set by .ci/run) fails instead. */
const browserAt = existsSync(CHROMIUM) || process.env.REQUIRE_CHROMIUM === '1';
const describeInBrowser = browserAt ? describe : describe.skip;

describeInBrowser(
  browserAt
    ? 'the dashboard in a real browser (chromium, headless)'
    : `the dashboard in a real browser: skipped, no chromium at ${CHROMIUM} (apt-get install chromium)`,
  () => {
    let redis: TestRedis;
    let app: NestFastifyApplication;
    let browser: Browser;
    let base: string;
    // Whole minutes, a little in the past: slot boundaries fall where the test puts them.
    const clock = new FakeClock(Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS - 10 * MINUTE_MS);
    const http = () => request(app.getHttpServer());
    const increment = (item: string, amount: number) =>
      http().post(`/boards/trending/items/${item}/increment`).send({ amount }).expect(200);

    beforeAll(async () => {
      redis = await startTestRedis();
      // Ingest reads its declarations and the stream often: the panel's figures move within the test.
      app = await startTestApp(redis, clock, {
        STREAM_COALESCE_MS: '50',
        INGEST_REFRESH_MS: '100',
        INGEST_WAIT_MS: '50',
      });
      await app.listen(0, '127.0.0.1');
      base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });

      await http()
        .put('/admin/boards/trending')
        .set(ADMIN)
        .send({
          windows: [
            { name: '10m', period: '10m', interval: '1m', snapshots: { keep: 30, top: 50 } },
            { name: '1h', period: '1h', interval: '5m' },
          ],
        })
        .expect(201);
      // Five minutes of history: each minute's slot closes into a snapshot, so items have a series and a movement.
      const minutes = [
        { 'post-a': 9, 'post-b': 4, 'post-c': 2 },
        { 'post-b': 7, 'post-d': 3 },
        { 'post-c': 9, 'post-a': 1 },
        { 'post-d': 8, 'post-e': 5 },
        { 'post-b': 6, 'post-e': 2 },
      ];
      const signups = [3, 8, 5, 12, 9];
      for (const [minute, amounts] of minutes.entries()) {
        for (const [item, amount] of Object.entries(amounts)) await increment(item, amount);
        await http().post('/counters/signups/increment').send({ count: signups[minute] });
        clock.advanceMs(MINUTE_MS);
      }
      // Into the current minute: post-e climbs past the last snapshot's ranks.
      await increment('post-e', 6);
      for (const value of [0.004, 0.012, 0.007, 0.03]) await http().post('/stats/checkout/Latency').send({ value });
      for (const value of [0.1, 0.2]) await http().post('/stats/signup/Latency').send({ value });
      // A board nobody wrote to, and one with views over its windows.
      await http()
        .put('/admin/boards/quiet')
        .set(ADMIN)
        .send({ windows: [{ name: 'hour', period: '1h', interval: '5m' }] })
        .expect(201);
      await http()
        .put('/admin/boards/videos')
        .set(ADMIN)
        .send({
          windows: [
            { name: 'hour', period: '1h', interval: '5m' },
            { name: 'day', period: '24h', interval: '1h' },
          ],
          views: [
            { name: 'fading', mode: 'decay', window: 'hour', halfLife: '15m' },
            { name: 'trending', mode: 'rising', window: 'hour', baseline: 'day' },
          ],
        })
        .expect(201);
      await http()
        .post('/boards/videos/increments')
        .send({
          items: [
            { item: 'v-2', amount: 30 },
            { item: 'v-3', amount: 6 },
          ],
        })
        .expect(200);
    });
    afterAll(async () => {
      await browser?.close();
      await app?.close();
      await redis?.stop();
    });

    /** A page whose console errors are collected, and whose header status texts are recorded in order. */
    async function newPage(): Promise<{ page: Page; errors: string[]; statuses: () => Promise<string[]> }> {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(error.message));
      await page.addInitScript(() => {
        const seen: string[] = [];
        (window as unknown as { statuses: string[] }).statuses = seen;
        document.addEventListener('DOMContentLoaded', () => {
          const status = document.getElementById('status')!;
          seen.push(status.textContent ?? '');
          new MutationObserver(() => seen.push(status.textContent ?? '')).observe(status, {
            childList: true,
            characterData: true,
            subtree: true,
          });
        });
      });
      const statuses = () => page.evaluate(() => (window as unknown as { statuses: string[] }).statuses);
      return { page, errors, statuses };
    }

    async function openDashboard(): Promise<{ page: Page; errors: string[]; firstPaintMs: number }> {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${base}/dashboard?board=trending&window=10m`);
      // First contentful paint, as the browser measured it from navigation start (it may be reported after load).
      const firstPaintMs = await page.evaluate(
        () =>
          new Promise<number>((resolve) => {
            new PerformanceObserver((list) => {
              const paint = list.getEntriesByName('first-contentful-paint')[0];
              if (paint) resolve(paint.startTime);
            }).observe({ type: 'paint', buffered: true });
            setTimeout(() => resolve(Number.POSITIVE_INFINITY), 5000);
          }),
      );
      return { page, errors, firstPaintMs };
    }

    const rankOf = (page: Page, item: string) =>
      page.locator(`#top tbody tr[data-item="${item}"] .rank`).textContent({ timeout: 5000 });

    it('paints at once, shows the live top with movement, and a new rank within 1 s of the increments', async () => {
      const { page, errors, firstPaintMs } = await openDashboard();
      expect(firstPaintMs).toBeLessThan(1000);
      expect(await rankOf(page, 'post-b')).toBe('1');
      await page.waitForSelector('#status.live');
      const moved = await page.locator('#top tbody tr[data-item="post-e"] .move').textContent();
      expect(moved).toBe('▲ 3');

      const sentMs = Date.now();
      await increment('post-e', 30);
      await increment('post-f', 12);
      await page.waitForFunction(
        () => document.querySelector('#top tbody tr[data-item="post-e"] .rank')?.textContent === '1',
        undefined,
        { timeout: 1000 },
      );
      expect(Date.now() - sentMs).toBeLessThan(1000);
      expect(await page.locator('#top tbody tr[data-item="post-f"] .move').textContent()).toBe('new');
      await page.screenshot({ path: join(SHOTS, 'dashboard-live.png'), fullPage: true });

      // An item's sparkline: its rank at each kept slot boundary; and its data, where it has some.
      await http()
        .put('/boards/trending/items/post-b/data')
        .send({ title: 'Hello', tags: ['a'] })
        .expect(204);
      await page.click('#top tbody tr[data-item="post-b"]');
      await page.waitForSelector('#sparkline svg polyline');
      expect(await page.locator('#item-note').textContent()).toMatch(/Rank at each of the last \d+ slot boundaries/);
      await page.waitForSelector('#item-data dd', { timeout: 5000 });
      expect(await page.locator('#item-data').innerText()).toMatch(/title\s+Hello\s+tags\s+\["a"\]/);
      await page.screenshot({ path: join(SHOTS, 'dashboard-item.png'), fullPage: true });

      // Counters, the stats hour and, with the admin token, the routes panels.
      await page.waitForFunction(() => document.querySelector('#counter-note')?.textContent === '5 samples of 60 s');
      // Any context/type typed in; with the admin token, the recorded pairs to pick from.
      await page.fill('#stats-context', 'signup');
      await page.fill('#stats-type', 'Latency');
      await page.click('#stats-form button');
      await page.waitForFunction(() => document.querySelector('#stats-figures dd')?.textContent === '2');
      await page.fill('#token', ADMIN_TOKEN);
      await page.dispatchEvent('#token', 'change');
      await page.waitForSelector('#stats-pair-label:not([hidden])');
      await page.selectOption('#stats-pair', { label: 'checkout · Latency' });
      await page.waitForFunction(() => document.querySelector('#stats-figures dd')?.textContent === '4');
      await page.waitForSelector('#routes tbody tr');
      expect(await page.locator('#slowest tbody tr').count()).toBeGreaterThan(0);
      await page.screenshot({ path: join(SHOTS, 'dashboard-admin.png'), fullPage: true });

      expect(errors).toEqual([]);
      await page.close();
    });

    it('an empty service says how to get a board (or `npm run demo`), not "starting…"', async () => {
      const { page, errors } = await newPage();
      await page.route('**/boards?limit=1000', (route) =>
        route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ boards: [] }) }),
      );
      await page.goto(`${base}/dashboard`);
      await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'no boards yet');
      const empty = await page.locator('#empty').textContent();
      expect(empty).toContain('PUT /admin/boards/:board');
      expect(empty).toContain('npm run demo');
      expect(await page.locator('#empty').isVisible()).toBe(true);
      expect(await page.content()).not.toContain('starting…');
      expect(errors).toEqual([]);
      await page.close();
    });

    it('a board with no data says so, and how data gets there', async () => {
      const { page, errors } = await newPage();
      await page.goto(`${base}/dashboard?board=quiet`);
      await page.waitForSelector('#status.live');
      await page.waitForFunction(() =>
        /No data in quiet \/ hour yet/.test(document.querySelector('#empty')?.textContent ?? ''),
      );
      expect(await page.locator('#empty').textContent()).toContain('POST /boards/quiet/items/:item/increment');
      expect(errors).toEqual([]);
      await page.close();
    });

    it('shows views with their mode, why a rising item is listed, and that a view keeps no history', async () => {
      const { page, errors } = await newPage();
      await page.goto(`${base}/dashboard?board=videos&window=trending`);
      await page.waitForSelector('#top tbody tr[data-item="v-2"]');
      const labels = await page.locator('#window option').allTextContents();
      expect(labels).toEqual(['hour', 'day', 'fading · decay view of hour', 'trending · rising view of hour']);
      expect(await page.locator('#span').textContent()).toMatch(/^videos \/ trending \(rising view\):/);
      expect(await page.locator('#top tbody tr[data-item="v-2"] .item small').textContent()).toMatch(
        /^ 30 vs \d+(\.\d+)? expected · (new|rising)$/,
      );
      await page.click('#top tbody tr[data-item="v-2"]');
      expect(await page.locator('#item-note').textContent()).toContain('a view keeps no history; its window "hour"');
      // Plain windows say when they keep history.
      await page.goto(`${base}/dashboard?board=trending&window=10m`);
      await page.waitForSelector('#top tbody tr');
      expect(await page.locator('#window option').allTextContents()).toEqual(['10m · history kept', '1h']);
      expect(await page.locator('#top tbody tr[data-item="post-b"]').getAttribute('title')).toMatch(
        /^previous rank \d+$/,
      );
      expect(errors).toEqual([]);
      await page.close();
    });

    it("a segment picker switches the board's listings to a segment, live", async () => {
      await http()
        .put('/admin/boards/langs')
        .set(ADMIN)
        .send({
          windows: [{ name: 'hour', period: '1h', interval: '5m', snapshots: { keep: 5, top: 10 } }],
          segments: { max: 10 },
        })
        .expect(201);
      const write = (item: string, amount: number, segments: string[]) =>
        http().post(`/boards/langs/items/${item}/increment`).send({ amount, segments }).expect(200);
      await write('hola', 9, ['es']);
      await write('hello', 4, ['en']);
      await write('bonjour', 2, ['fr', 'en']);
      const { page, errors } = await newPage();
      await page.goto(`${base}/dashboard?board=langs`);
      await page.waitForSelector('#top tbody tr[data-item="hola"]');
      expect(await page.locator('#segment-label').isVisible()).toBe(true);
      expect(await page.locator('#segment option').allTextContents()).toEqual([
        'whole board',
        'en · 2 items',
        'es · 1 items',
        'fr · 1 items',
      ]);
      await page.selectOption('#segment', 'en');
      await page.waitForFunction(() => !document.querySelector('#top tbody tr[data-item="hola"]'));
      const items = () => page.locator('#top tbody tr .item').allTextContents();
      expect(await items()).toEqual(['hello', 'bonjour']);
      expect(await page.locator('#span').textContent()).toMatch(/^langs \/ hour · segment en:/);
      // Live: a write to the segment moves its rows; one to another segment does not show.
      await write('bonjour', 5, ['en']);
      await write('hola', 50, ['es']);
      await page.waitForFunction(() => document.querySelector('#top tbody tr .item')?.textContent === 'bonjour');
      expect(await items()).toEqual(['bonjour', 'hello']);
      // The item panel reads the segment too: its history is the segment's.
      await page.click('#top tbody tr[data-item="hello"]');
      await page.waitForSelector('#item-note:has-text("Rank at each")');
      await page.screenshot({ path: join(SHOTS, 'dashboard-segment.png'), fullPage: true });
      await page.selectOption('#segment', '');
      await page.waitForSelector('#top tbody tr[data-item="hola"]');
      // A board without segments shows no picker.
      await page.goto(`${base}/dashboard?board=quiet`);
      await page.waitForSelector('#status.live');
      expect(await page.locator('#segment-label').isVisible()).toBe(false);
      expect(errors).toEqual([]);
      await page.close();
    });

    it('a window still draining (503 WINDOW_DRAINING, Retry-After: 1) is waited for, never shown as an error', async () => {
      const { page, errors, statuses } = await newPage();
      const drainingOnce = (pattern: string) => {
        let answered = false;
        return page.route(pattern, (route) => {
          if (answered) return route.continue();
          answered = true;
          return route.fulfill({
            status: 503,
            contentType: 'application/json',
            headers: { 'Retry-After': '1' },
            body: JSON.stringify({
              statusCode: 503,
              error: 'Service Unavailable',
              code: 'WINDOW_DRAINING',
              message: 'window "10m" of board "trending" is still draining an expired slot; retry after 1 s',
            }),
          });
        });
      };
      await drainingOnce('**/boards/trending/stream?**');
      await drainingOnce('**/boards/trending/items/post-b/history?**');
      await page.goto(`${base}/dashboard?board=trending&window=10m`);
      await page.waitForSelector('#status.live', { timeout: 5000 });
      await page.click('#top tbody tr[data-item="post-b"]');
      await page.waitForSelector('#sparkline svg polyline', { timeout: 5000 });
      const seen = await statuses();
      expect(seen).toContain('catching up…');
      expect(seen.filter((text) => /refused|lost|WINDOW_DRAINING|draining/.test(text))).toEqual([]);
      expect(await page.locator('#item-note').textContent()).toMatch(/Rank at each of the last \d+ slot boundaries/);
      // The browser reports each 503 it received; nothing else went wrong.
      expect(errors.filter((text) => !/status of 503/.test(text))).toEqual([]);
      await page.close();
    });

    it('shows each stream source with its lag, applied and dead-lettered events and throughput, moving (and no last error)', async () => {
      await http()
        .put('/admin/boards/ingested')
        .set(ADMIN)
        .send({ windows: [{ name: 'hour', period: '1h', interval: '5m' }] })
        .expect(201);
      const stream = redis.client as Redis;
      const add = (count: number, payload = '{"item":"i-1"}') =>
        Promise.all(Array.from({ length: count }, () => stream.xadd('clicks', '*', 'event', payload)));
      await add(5);
      await http()
        .put('/admin/ingest/clicks')
        .set(ADMIN)
        .send({ kind: 'redis-stream', stream: 'clicks', board: 'ingested' })
        .expect(201);
      const { page, errors } = await newPage();
      await page.goto(`${base}/dashboard`);
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
      expect(await page.locator('#ingest-sources tr[data-source="clicks"] td').nth(1).textContent()).toBe(
        'Redis clicks',
      );
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
      await page.goto(`${base}/dashboard`);
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

    it('serves the page with its own scripts only (CSP) and the API security headers on its data', async () => {
      const page = await http().get('/dashboard').expect(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['content-security-policy']).toContain("script-src 'self'");
      expect(page.text).not.toMatch(/https?:\/\//);
      await http()
        .get('/dashboard/dashboard.js')
        .expect(200)
        .expect('content-type', /javascript/);
      await http().get('/dashboard/dashboard.css').expect(200).expect('content-type', /css/);
      for (const script of ['kit.js', 'panels.js', 'ingest.js', 'retractions.js'])
        await http()
          .get(`/dashboard/${script}`)
          .expect(200)
          .expect('content-type', /javascript/);
    });

    // Last: it moves the clock a day on.
    it("shows a calendar window's period in its zone, its archives, and a new period's archive live", async () => {
      await http()
        .put('/admin/boards/league')
        .set(ADMIN)
        .send({ windows: [{ name: 'day', calendar: 'day', timeZone: 'Asia/Tokyo', archive: { keep: 3, top: 5 } }] })
        .expect(201);
      await http()
        .post('/boards/league/increments')
        .send({
          items: [
            { item: 'ann', amount: 7 },
            { item: 'bob', amount: 3 },
          ],
        })
        .expect(200);
      const { page, errors } = await newPage();
      await page.goto(`${base}/dashboard?board=league&window=day`);
      await page.waitForSelector('#top tbody tr[data-item="ann"]');
      expect(await page.locator('#window option').allTextContents()).toEqual(['day · day in Asia/Tokyo, archived']);
      expect(await page.locator('#span').textContent()).toMatch(/^league \/ day: day .+ – .+ \(Asia\/Tokyo\)/);
      await page.waitForFunction(() =>
        /No closed period archived yet/.test(document.querySelector('#archives-note')?.textContent ?? ''),
      );

      // Tokyo's midnight passes with nobody writing: the stream shows the new, empty day and the
      // archive panel the day that closed.
      const { body: day } = await http().get('/boards/league/top?window=day').expect(200);
      clock.setMs(day.to * 1000 + 1000);
      await page.waitForFunction(() => document.querySelectorAll('#top tbody tr').length === 0, undefined, {
        timeout: 5000,
      });
      await page.waitForSelector('#archives-list li', { timeout: 5000 });
      expect(await page.locator('#archives-list').innerText()).toMatch(/ann\s+7\s+bob\s+3/);
      expect(await page.locator('#archives-list h3').textContent()).toContain('(Asia/Tokyo)');
      await page.screenshot({ path: join(SHOTS, 'dashboard-calendar.png'), fullPage: true });
      expect(errors).toEqual([]);
      await page.close();
    });
  },
);
