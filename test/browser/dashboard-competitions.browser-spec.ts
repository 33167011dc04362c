import { join } from 'node:path';
import { Page } from 'playwright-core';
import { ADMIN } from '../../harness/app';
import { describeInBrowser, openAsAdmin, SHOTS, useDashboard } from '../support/dashboard-browser';

const DAY_MS = 24 * 3600_000;

/** Waits until a table lists exactly `items`, in order. */
async function waitForRows(page: Page, table: string, items: string[]): Promise<void> {
  await page.waitForFunction(
    ([id, expected]) =>
      JSON.stringify(
        [...document.querySelectorAll(`#${id} tbody tr`)].map((tr) => (tr as HTMLElement).dataset.item),
      ) === JSON.stringify(expected),
    [table, items] as const,
    { timeout: 10_000 },
  );
}

describeInBrowser("the dashboard's competitions panel: leagues and group boards (#48)", () => {
  const world = useDashboard();
  const { http, clock } = world;

  beforeAll(async () => {
    const boards: Record<string, object> = {
      ladder: {
        windows: [{ name: 'week', calendar: 'week' }],
        leagues: { window: 'week', size: 2, tiers: ['bronze', 'silver'], promote: 1, relegate: 0 },
      },
      players: { windows: [{ name: 'day', period: '24h', interval: '1h' }] },
    };
    for (const [name, config] of Object.entries(boards))
      await http().put(`/admin/boards/${name}`).set(ADMIN).send(config).expect(201);
    await http()
      .put('/admin/boards/teams')
      .set(ADMIN)
      .send({ groupOf: { board: 'players', window: 'day', top: 2 } })
      .expect(201);
    // New items fill the lowest tier's cohorts of two in the order they first write.
    for (const [item, amount] of [
      ['ann', 5],
      ['bob', 3],
      ['cy', 1],
    ] as const)
      await http().post(`/boards/ladder/items/${item}/increment`).send({ amount }).expect(200);
  });

  it("shows a tier's cohort, an item's own cohort when its row is clicked, and the moves once the period closed", async () => {
    const { page, errors } = await openAsAdmin(world, 'board=ladder&window=week');
    await page.waitForSelector('#leagues:not([hidden])');
    expect(await page.locator('#league-tier option').allTextContents()).toEqual(['silver', 'bronze']);
    await waitForRows(page, 'cohort', ['ann', 'bob']);
    expect(await page.locator('#cohort tbody .score').allTextContents()).toEqual(['5', '3']);

    await page.click('#top tbody tr[data-item="cy"]');
    await waitForRows(page, 'cohort', ['cy']);
    expect(await page.locator('#league-cohort').inputValue()).toBe('2');
    await page.locator('#cohort tbody tr.selected[data-item="cy"]').waitFor();

    // The week ends: each cohort's best moves up; a new week's first event places ann in silver. Seven days
    // to the day land in the next calendar week whatever weekday the clock started on (eight from a Sunday
    // skip a whole week, which closes empty).
    clock.advanceMs(7 * DAY_MS);
    await http().post('/boards/ladder/items/ann/increment').send({ amount: 2 }).expect(200);
    await waitForRows(page, 'league-moves', ['ann', 'cy']);
    expect(await page.locator('#league-moves tbody .move').allTextContents()).toEqual([
      'bronze → silver',
      'bronze → silver',
    ]);
    await page.click('#top tbody tr[data-item="ann"]');
    await page.waitForFunction(() => (document.getElementById('league-tier') as HTMLSelectElement).value === 'silver');
    await waitForRows(page, 'cohort', ['ann']);
    await page.locator('#competitions').screenshot({ path: join(SHOTS, 'dashboard-leagues.png') });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says what a group board ranks and joins and takes out members, its live top following joins, leaves and member writes', async () => {
    // Written here: the league test before this one moves the clock past the day window.
    await http()
      .post('/boards/players/increments')
      .send({
        items: [
          { item: 'p1', amount: 40 },
          { item: 'p2', amount: 30 },
          { item: 'p3', amount: 50 },
        ],
      })
      .expect(200);
    const { page, errors } = await openAsAdmin(world, 'board=teams');
    await page.waitForSelector('#groups:not([hidden])');
    expect(await page.locator('#group-of').textContent()).toContain('players / day');
    expect(await page.locator('#leagues').isHidden()).toBe(true);
    const member = async (group: string, item: string, action: 'join' | 'leave') => {
      await page.fill('#member-group', group);
      await page.fill('#member-item', item);
      await page.click(`#member-form button[value="${action}"]`);
      await page
        .waitForFunction(
          (said) => document.getElementById('competitions-note')?.textContent === said,
          `${item} ${action === 'join' ? 'is in' : 'left'} ${group}`,
          { timeout: 10_000 },
        )
        .catch(async (error: Error) => {
          throw new Error(`${error.message}: the note says ${await page.locator('#competitions-note').textContent()}`);
        });
    };
    await member('red', 'p1', 'join');
    await member('red', 'p2', 'join');
    await member('blue', 'p3', 'join');
    await waitForRows(page, 'top', ['red', 'blue']);
    await member('red', 'p1', 'leave');
    await waitForRows(page, 'top', ['blue', 'red']);
    // A member board write moves its group live too.
    await http().post('/boards/players/items/p2/increment').send({ amount: 40 }).expect(200);
    await waitForRows(page, 'top', ['red', 'blue']);
    expect(await page.locator('#top tbody .score').allTextContents()).toEqual(['70', '50']);
    expect(errors).toEqual([]);
    await page.close();
  });
});
