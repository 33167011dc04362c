import { join } from 'node:path';
import { ADMIN, ADMIN_TOKEN } from '../../harness/app';
import { describeInBrowser, SHOTS, useDashboard } from '../support/dashboard-browser';

describeInBrowser('the dashboard', () => {
  const world = useDashboard();
  const { clock, http, increment, newPage, openDashboard, rankOf } = world;

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
    await page.waitForFunction(
      () =>
        document.querySelector('#counter-note')?.textContent === '5 samples of 60 s, the last (dashed) still counting',
    );
    // The current minute is still counting: drawn dashed and hollow, not as a fall (issue #47).
    expect(await page.locator('#counter-chart polyline.partial').count()).toBe(1);
    expect(await page.locator('#counter-chart circle.partial').count()).toBe(1);
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

  it('lists boards past the first page (1 000): it follows nextCursor (issue #47)', async () => {
    const { page, errors } = await newPage();
    // The first page says there is more and lists nothing; the next one is the service's real first page.
    await page.route('**/boards?limit=1000', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ boards: [], total: 1001, nextCursor: 'page-2' }),
      }),
    );
    await page.route('**/boards?limit=1000&cursor=page-2', async (route) =>
      route.fulfill({ response: await route.fetch({ url: `${world.base}/boards?limit=1000` }) }),
    );
    await page.goto(`${world.base}/dashboard`);
    await page.waitForFunction(() => document.querySelectorAll('#board option').length > 0);
    expect(await page.locator('#board option').allTextContents()).toContain('trending');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('writes figures as a person reads them: 4 significant digits, never scientific notation, "1 sample"', async () => {
    const { page } = await newPage();
    await page.goto(`${world.base}/dashboard`);
    const shown = await page.evaluate(() => {
      const kit = (
        window as unknown as { TrendboardKit: { format(v: number): string; plural(n: number, s: string): string } }
      ).TrendboardKit;
      return [
        kit.format(33700.25),
        kit.format(0.123456),
        kit.format(12),
        kit.plural(1, 'sample'),
        kit.plural(0, 'sample'),
      ];
    });
    expect(shown).toEqual(['33700', '0.1235', '12', '1 sample', '0 samples']);
    await page.close();
  });

  it('an empty service says how to get a board (or `npm run demo`), not "starting…"', async () => {
    const { page, errors } = await newPage();
    await page.route('**/boards?limit=1000', (route) =>
      route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ boards: [] }) }),
    );
    await page.goto(`${world.base}/dashboard`);
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
    await page.goto(`${world.base}/dashboard?board=quiet`);
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
    await page.goto(`${world.base}/dashboard?board=videos&window=trending`);
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
    await page.goto(`${world.base}/dashboard?board=trending&window=10m`);
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
    await page.goto(`${world.base}/dashboard?board=langs`);
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
    // No boundary has passed in the segment yet: the note says so (not "the last 0 slot boundaries").
    await page.waitForSelector('#item-note:has-text("No slot boundary passed yet")');
    await page.screenshot({ path: join(SHOTS, 'dashboard-segment.png'), fullPage: true });
    await page.selectOption('#segment', '');
    await page.waitForSelector('#top tbody tr[data-item="hola"]');
    // A board without segments shows no picker.
    await page.goto(`${world.base}/dashboard?board=quiet`);
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
    await page.goto(`${world.base}/dashboard?board=trending&window=10m`);
    await page.waitForSelector('#status.live', { timeout: 5000 });
    await page.click('#top tbody tr[data-item="post-b"]');
    await page.waitForSelector('#sparkline svg polyline', { timeout: 5000 });
    const seen = await statuses();
    expect(seen).toContain('catching up…');
    expect(seen.filter((text) => /refused|lost|WINDOW_DRAINING|draining/.test(text))).toEqual([]);
    expect(await page.locator('#item-note').textContent()).toMatch(/Rank at each of the last \d+ slot boundaries/);
    // The world.browser reports each 503 it received; nothing else went wrong.
    expect(errors.filter((text) => !/status of 503/.test(text))).toEqual([]);
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
    const scripts = ['kit.js', 'rows.js', 'feed.js', 'panels.js', 'ingest.js', 'retractions.js', 'moderation.js'];
    for (const script of [...scripts, 'competitions.js'])
      await http()
        .get(`/dashboard/${script}`)
        .expect(200)
        .expect('content-type', /javascript/);
    // Only the page's own files: no other name reads a file.
    await http().get('/dashboard/index.html').expect(404);
    await http().get('/dashboard/..%2Fdashboard.controller.js').expect(404);
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
    await page.goto(`${world.base}/dashboard?board=league&window=day`);
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
});
