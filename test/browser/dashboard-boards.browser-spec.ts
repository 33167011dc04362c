import { join } from 'node:path';
import { Page } from 'playwright-core';
import { ADMIN } from '../../harness/app';
import { describeInBrowser, openAsAdmin, SHOTS, useDashboard } from '../support/dashboard-browser';

/** Waits until the live top shows `listing` (the span line up to its colon) with exactly `items`, in order. */
async function waitForTop(page: Page, listing: string, items: string[]): Promise<void> {
  await page.waitForFunction(
    ([head, expected]) =>
      Boolean(document.querySelector('#span')?.textContent?.startsWith(`${head}:`)) &&
      JSON.stringify([...document.querySelectorAll('#top tbody tr')].map((tr) => (tr as HTMLElement).dataset.item)) ===
        JSON.stringify(expected),
    [listing, items] as const,
    { timeout: 10_000 },
  );
}

/** A 200, else the answer's message (what the test failed on). */
const answered = (answer: { status: number; body: { message?: string } }) =>
  expect([answer.status, answer.body.message]).toEqual([200, undefined]);

describeInBrowser("the dashboard's moderation panel and competition and multi-metric boards", () => {
  const world = useDashboard();
  const { http } = world;

  beforeAll(async () => {
    const boards: Record<string, object> = {
      forum: { windows: [{ name: 'day', period: '24h', interval: '1h' }], moderation: { review: true } },
      rated: {
        windows: [{ name: 'day', period: '24h', interval: '1h' }],
        metrics: ['up', 'down'],
        views: [
          { name: 'best', mode: 'wilson', window: 'day', positive: 'up', negative: 'down' },
          { name: 'argued', mode: 'controversial', window: 'day', positive: 'up', negative: 'down' },
        ],
      },
      race: { windows: [{ name: 'day', period: '24h', interval: '1h' }], aggregate: 'min', order: 'asc' },
      jump: { windows: [{ name: 'day', period: '24h', interval: '1h' }], aggregate: 'max', tiebreak: { order: 'asc' } },
    };
    for (const [name, config] of Object.entries(boards))
      await http().put(`/admin/boards/${name}`).set(ADMIN).send(config).expect(201);
    const items = (board: string, entries: object[]) =>
      http().post(`/boards/${board}/increments`).send({ items: entries }).expect(answered);
    await items('forum', [
      { item: 'spam-1', amount: 50 },
      { item: 'post-2', amount: 7 },
      { item: 'post-3', amount: 3 },
    ]);
    await items('rated', [
      { item: 'a-1', amount: 40, metric: 'up' },
      { item: 'a-2', amount: 6, metric: 'up' },
      { item: 'a-3', amount: 3, metric: 'up' },
    ]);
    await items('rated', [
      { item: 'a-1', amount: 35, metric: 'down' },
      { item: 'a-2', amount: 1, metric: 'down' },
    ]);
    const score = (board: string, item: string, record: object) =>
      http().post(`/boards/${board}/items/${item}/score`).send(record).expect(answered);
    await score('race', 'ann', { score: 3150 });
    await score('race', 'bob', { score: 2975 });
    await score('jump', 'ann', { score: 10, tiebreak: 3150 });
    await score('jump', 'bob', { score: 10, tiebreak: 2980 });
  });

  it('hides an item from its row in the live top and allows it back with its counts; a review board lists what it allows (#49)', async () => {
    const { page, errors } = await openAsAdmin(world, 'board=trending&window=10m');
    const before: { item: string; rank: number; score: number }[] = (
      await http().get('/boards/trending/top?window=10m').expect(200)
    ).body.items;
    const items = before.map((row) => row.item);
    await waitForTop(page, 'trending / 10m', items);
    await page.click('#top tbody tr[data-item="post-b"] button.hide');
    await waitForTop(
      page,
      'trending / 10m',
      items.filter((item) => item !== 'post-b'),
    );
    const moderated = page.locator('#moderated tbody tr[data-item="post-b"]');
    await moderated.locator('.state.hidden').waitFor();
    expect(await moderated.locator('.rank').textContent()).toBe('—');

    await moderated.locator('button.allowed').click();
    await waitForTop(page, 'trending / 10m', items);
    const row = page.locator('#top tbody tr[data-item="post-b"]');
    const shown = before.find((entry) => entry.item === 'post-b')!;
    expect([await row.locator('.rank').textContent(), await row.locator('.score').textContent()]).toEqual([
      String(shown.rank),
      String(shown.score),
    ]);
    await moderated.locator('.state.allowed').waitFor();

    // A review board lists nothing until allowed; its queue lists what waits, highest score first.
    await page.selectOption('#board', 'forum');
    await page.waitForFunction(() => document.querySelectorAll('#review-queue tbody tr').length === 3, undefined, {
      timeout: 10_000,
    });
    const queue = page.locator('#review-queue tbody tr');
    expect(await queue.locator('.item').allTextContents()).toEqual(['spam-1', 'post-2', 'post-3']);
    expect(await queue.locator('.score').allTextContents()).toEqual(['50', '7', '3']);
    await waitForTop(page, 'forum / day', []);
    await page.click('#review-queue tbody tr[data-item="post-2"] button.allowed');
    await waitForTop(page, 'forum / day', ['post-2']);
    await page.click('#review-queue tbody tr[data-item="spam-1"] button.hidden');
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('#review-queue tbody tr .item')].map((td) => td.textContent).join() === 'post-3',
      undefined,
      { timeout: 10_000 },
    );
    expect(await page.locator('#top tbody tr[data-item="post-2"] .rank').textContent()).toBe('1');
    await page.locator('#moderation').screenshot({ path: join(SHOTS, 'dashboard-moderation.png') });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a multi-metric board's counts, ranks by the metric picked, and lists wilson and controversial views (#50)", async () => {
    const { page, errors } = await openAsAdmin(world, 'board=rated&window=day');
    await waitForTop(page, 'rated / day', ['a-1', 'a-2', 'a-3']);
    await page.waitForSelector('#metric-label:not([hidden])');
    const counts = (item: string) => page.locator(`#top tbody tr[data-item="${item}"] .metric`).allTextContents();
    expect(await counts('a-1')).toEqual(['40', '35']);
    expect(await page.locator('#top thead th.metric').allTextContents()).toEqual(['up ▾', 'down']);

    // The picker restreams: the live top is the stream of ?metric=down, its rows each metric's counts.
    const restream = page.waitForRequest((asked) => /\/boards\/rated\/stream\?.*metric=down/.test(asked.url()));
    await page.selectOption('#metric', 'down');
    await restream;
    await waitForTop(page, 'rated / day', ['a-1', 'a-2']);
    expect(await page.locator('#top thead th.metric').allTextContents()).toEqual(['up', 'down ▾']);
    expect(await page.locator('#top tbody tr .score').allTextContents()).toEqual(['35', '1']);
    expect(await page.locator('#span').textContent()).toContain('ranked by down');
    await page.waitForFunction(() => document.querySelector('#status')?.textContent === 'live');
    // A down vote reaches the page through the stream: a-2 moves to the top, its counts with it.
    await http()
      .post('/boards/rated/increments')
      .send({ items: [{ item: 'a-2', amount: 50, metric: 'down' }] })
      .expect(answered);
    await waitForTop(page, 'rated / day', ['a-2', 'a-1']);
    expect(await counts('a-2')).toEqual(['6', '51']);
    expect(await page.locator('#top tbody tr .score').allTextContents()).toEqual(['51', '35']);
    await http()
      .post('/boards/rated/increments')
      .send({ items: [{ item: 'a-2', amount: -50, metric: 'down' }] })
      .expect(answered);
    await waitForTop(page, 'rated / day', ['a-1', 'a-2']);
    await page.locator('#live').screenshot({ path: join(SHOTS, 'dashboard-metrics.png') });

    const labels = await page.locator('#window option').allTextContents();
    expect(labels).toContain('best · wilson view of day (up/down)');
    expect(labels).toContain('argued · controversial view of day (up/down)');
    await page.selectOption('#window', 'best');
    await waitForTop(page, 'rated / best (wilson view)', ['a-2', 'a-3', 'a-1']);
    expect(await page.locator('#metric-label').isHidden()).toBe(true);
    // Both counts of each row, and the formula's value as a person reads it.
    expect(await counts('a-2')).toEqual(['6', '1']);
    expect(await page.locator('#top tbody tr .score').allTextContents()).toEqual(['0.4869', '0.4385', '0.4216']);
    await page.selectOption('#window', 'argued');
    await waitForTop(page, 'rated / argued (controversial view)', ['a-1', 'a-2']);
    expect(await page.locator('#top tbody tr .score').allTextContents()).toEqual(['43.72', '1.383']);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says lower scores rank first on an asc board, and shows the tiebreak that orders a tie (#48)', async () => {
    const { page, errors } = await openAsAdmin(world, 'board=race&window=day');
    await waitForTop(page, 'race / day', ['bob', 'ann']);
    expect(await page.locator('#top tbody tr .score').allTextContents()).toEqual(['2975', '3150']);
    expect(await page.locator('#top thead th.score').textContent()).toBe('score (lowest first)');
    expect(await page.locator('#span').textContent()).toContain('lower scores rank first');

    await page.selectOption('#board', 'jump');
    await waitForTop(page, 'jump / day', ['bob', 'ann']);
    expect(await page.locator('#top tbody tr .tiebreak').allTextContents()).toEqual(['2980', '3150']);
    expect(await page.locator('#top thead').textContent()).toContain('tiebreak (lower wins a tie)');
    expect(errors).toEqual([]);
    await page.close();
  });
});
