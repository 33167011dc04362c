import request from 'supertest';
import { RankingService } from '../../src/ranking/ranking.service';
import { createBoard } from '../../harness/app';
import { useApp } from '../support/e2e';
import { TOPOLOGIES } from '../../harness/redis';

const T0 = 1_700_000_000_000;

const FULL = ['--maxmemory', '8mb', '--maxmemory-policy', 'noeviction'];
/** Batches of 1 000 items written before Redis counts as full: more than a read drains (MAX_READ_DRAIN_CALLS x EXPIRE_CHUNK). */
const MIN_BATCHES = 2;

/** maxmemory + noeviction: a full Redis refuses writes, keeps answering reads, and heals as windows move on. */
describe.each(TOPOLOGIES)('a full Redis is an outage that heals (%s)', (topology) => {
  // A private single node or three-master Cluster whose nodes hold 8 MB each (never a shared server): room for
  // the function libraries and several batches of the board, so a full Redis holds more than a read drains.
  // One client fills Redis with new items: its quota is not what this file tests.
  const { app, clock, http } = useApp(topology, {
    redisServerArgs: FULL,
    startMs: T0,
    env: { QUOTA_NEW_ITEMS: '0' },
  });
  const batchOf = (round: number) => ({
    items: Array.from({ length: 1000 }, (_, i) => ({ item: `item-${round}-${i}-${'x'.repeat(40)}` })),
  });

  // The window keeps snapshots: crossing a boundary on a full Redis must not stop the expiry that frees it.
  beforeAll(() =>
    createBoard(app(), 'b', { windows: [{ period: '10m', interval: '1m', snapshots: { keep: 3, top: 10 } }] }),
  );

  it('answers 507 REDIS_FULL, applies nothing of a refused write, keeps reads up, and writes again once expiry freed memory', async () => {
    let full: request.Response | undefined;
    let accepted = 0;
    // Until the board's own data fills Redis: a 507 before MIN_BATCHES came from memory the server held
    // for a moment on a loaded machine (seen in parallel runs), and the slot would be small enough for
    // one read to drain whole.
    for (let round = 0; round < 100 && !full; round++) {
      const answer = await http().post('/boards/b/increments').send(batchOf(round));
      if (answer.status === 507 && accepted >= MIN_BATCHES) full = answer;
      else if (answer.status !== 507) expect(answer.status).toBe(200);
      if (answer.status === 200) accepted++;
    }
    expect(accepted).toBeGreaterThanOrEqual(MIN_BATCHES); // expiring the board's data must free the space
    expect(full?.body).toEqual({
      statusCode: 507,
      error: 'Insufficient Storage',
      code: 'REDIS_FULL',
      message: expect.stringMatching(/out of memory/),
    });
    // A big batch is refused first (its own arguments count); small writes fill the rest.
    let refused: request.Response | undefined;
    for (let i = 0; i < 20_000 && !refused; i++) {
      const answer = await http().post(`/boards/b/items/small-${i}/increment`).set('Content-Type', 'application/json');
      if (answer.status === 507) refused = answer;
    }
    expect(refused?.body.code).toBe('REDIS_FULL');
    const probe = await http().post('/boards/b/items/probe/increment').set('Content-Type', 'application/json');
    expect([probe.status, probe.body.code]).toEqual([507, 'REDIS_FULL']);
    expect((await http().get('/boards/b/items/probe')).body.score).toBe(0);
    expect((await http().get('/boards/b/top?limit=3')).status).toBe(200);

    // The window moves past everything written: reads now expire (drain) while Redis is still full. The
    // expired slot outlasts a read's drain calls, so the read lists nothing of it: 503 WINDOW_DRAINING.
    clock.advanceMs(11 * 60_000);
    const top = await http().get('/boards/b/top?limit=3');
    expect([top.status, top.body.code]).toEqual([503, 'WINDOW_DRAINING']);
    expect(top.headers['retry-after']).toBe('1');
    const ranking = app().get(RankingService);
    let pass = await ranking.expireDue({ leaseMs: 30_000, claimBatch: 100 });
    for (let i = 0; i < 20 && pass.stillDraining > 0; i++) {
      clock.advanceMs(1); // a board still draining is due again on the next pass
      pass = await ranking.expireDue({ leaseMs: 30_000, claimBatch: 100 });
    }
    expect(pass).toMatchObject({ failures: 0, stillDraining: 0 });
    expect((await http().get('/boards/b/top')).body.items).toEqual([]);

    const healed = await http().post('/boards/b/items/probe/increment').set('Content-Type', 'application/json');
    expect(healed.status).toBe(200);
    expect(healed.body.windows['10m']).toEqual({ score: 1, rank: 1, previousRank: null });
  });
});
