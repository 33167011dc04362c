import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import request from 'supertest';
import { FakeClock } from '../../harness/clock';
import { ADMIN, ADMIN_TOKEN, startTestApp } from '../../harness/app';
import { startTestRedis, TestRedis } from '../../harness/redis';

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
export const MINUTE_MS = 60_000;
/**
 * Where the dashboard's clock starts: a fixed instant, so that no test depends on the day it runs. Whole
 * minutes (slot boundaries fall where a test puts them), 20 minutes before the end of a month, of a year
 * and of a Wednesday whose calendar week (Monday to Sunday) is the next year's first.
 */
export const DASHBOARD_START_MS = Date.UTC(2025, 11, 31, 23, 40);
/** Where the screenshots go: docs/ when refreshing the README's (DASHBOARD_SCREENSHOTS_DIR=docs), else a temp dir. */
export const SHOTS = process.env.DASHBOARD_SCREENSHOTS_DIR ?? mkdtempSync(join(tmpdir(), 'dashboard-'));

/** Without Debian's chromium the tests skip, saying why; CI (REQUIRE_CHROMIUM=1, set by .ci/run) fails instead. */
const browserAt = existsSync(CHROMIUM) || process.env.REQUIRE_CHROMIUM === '1';

/** A describe of dashboard tests in headless chromium, skipped (and saying why) without it. */
export function describeInBrowser(title: string, body: () => void): void {
  if (browserAt) describe(`${title} in a real browser (chromium, headless)`, body);
  else
    describe.skip(`${title} in a real browser: skipped, no chromium at ${CHROMIUM} (apt-get install chromium)`, body);
}

/** The app, its Redis and a browser of one spec file, and the page helpers: set once its beforeAll ran. */
export interface DashboardWorld {
  redis: TestRedis;
  app: NestFastifyApplication;
  browser: Browser;
  /** The app's address, http://127.0.0.1:<port>. */
  base: string;
  clock: FakeClock;
  http(): ReturnType<typeof request>;
  increment(item: string, amount: number): Promise<unknown>;
  /** A page whose console errors are collected, and whose header status texts are recorded in order. */
  newPage(): Promise<{ page: Page; errors: string[]; statuses: () => Promise<string[]> }>;
  /** The dashboard of board trending, window 10m, and its first contentful paint. */
  openDashboard(): Promise<{ page: Page; errors: string[]; firstPaintMs: number }>;
  rankOf(page: Page, item: string): Promise<string | null>;
}

/**
 * The dashboard specs' world: an app on a private Redis (ingest reading often, so its panel moves within
 * a test) listening on a free port, chromium, and the data the pages show: board trending (10m in 1m
 * slots keeping snapshots, 1h) with five minutes of history and post-e climbing in the current minute,
 * counter signups, stats of checkout and signup, board quiet (no data) and board videos with a decay
 * and a rising view.
 */
export function useDashboard(): DashboardWorld {
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let browser: Browser;
  let base: string;
  const clock = new FakeClock(DASHBOARD_START_MS);
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

  return {
    clock,
    http,
    increment,
    newPage,
    openDashboard,
    rankOf,
    get redis() {
      return redis;
    },
    get app() {
      return app;
    },
    get browser() {
      return browser;
    },
    get base() {
      return base;
    },
  };
}

/** The dashboard at `?address` in a new page, the admin token typed in (the admin panels read with it). */
export async function openAsAdmin(world: DashboardWorld, address: string): Promise<{ page: Page; errors: string[] }> {
  const { page, errors } = await world.newPage();
  await page.goto(`${world.base}/dashboard?${address}`);
  await page.fill('#token', ADMIN_TOKEN);
  await page.dispatchEvent('#token', 'change');
  return { page, errors };
}
