import Redis from 'ioredis';
import { ADMIN, createBoard } from '../support/app';
import { useSingleNodeApp } from '../support/e2e';

const T0 = 1_700_002_800_000;
const BATCH = 20;

/** The group's messages not yet delivered or not yet acknowledged. */
async function groupLag(client: Redis): Promise<number> {
  const [group] = (await client.xinfo('GROUPS', 'ord-in')) as unknown[][];
  const info = new Map<unknown, unknown>();
  for (let i = 0; i < (group?.length ?? 0); i += 2) info.set(group[i], group[i + 1]);
  return group ? Number(info.get('lag')) + Number(info.get('pending')) : Infinity;
}

/**
 * Batches sent ahead of the replies of the one before (docs/ingest.md, "Outages, backpressure"):
 * every other batch holds an event older than the window, so a shard's part of it goes the summed
 * way, is handed back (a refusal) and goes again entry by entry, while the next batch's part for that
 * shard, all valid, is already at Redis. That part must be refused (TB_INGEST_ORDER) and applied
 * after: applied first, it would record its ids as the shard's progress and the part before it would
 * be skipped as applied.
 */
describe('stream ingest: batches in flight keep each shard in id order (single)', () => {
  const e2e = useSingleNodeApp({
    startMs: T0,
    env: { INGEST_REFRESH_MS: '100', INGEST_LEASE_MS: '3000', INGEST_WAIT_MS: '50', INGEST_BATCH: String(BATCH) },
  });
  const { http } = e2e;

  it('counts every event once when a part is refused behind the one before it', async () => {
    await createBoard(e2e.app(), 'ord', { windows: [{ period: '1h', interval: '1m' }], shards: 2 });
    const client = e2e.redis().client as Redis;
    const expected = new Map<string, number>();
    let tooOld = 0;
    const pipeline = client.pipeline();
    for (let i = 0; i < 30 * BATCH; i++) {
      const item = `item-${i % 7}`;
      const amount = 1 + (i % 5);
      if (i % (2 * BATCH) === 3) {
        tooOld++;
        pipeline.xadd('ord-in', '*', 'event', JSON.stringify({ item, amount, at: T0 / 1000 - 7200 }));
      } else {
        expected.set(item, (expected.get(item) ?? 0) + amount);
        pipeline.xadd('ord-in', '*', 'event', JSON.stringify({ item, amount }));
      }
    }
    await pipeline.exec();
    await http()
      .put('/admin/ingest/ord')
      .set(ADMIN)
      .send({ kind: 'redis-stream', stream: 'ord-in', board: 'ord' })
      .expect(201);

    // Every message delivered and acknowledged (a skipped one too: the boards tell, not the lag).
    const deadline = Date.now() + 20_000;
    while ((await groupLag(client)) > 0) {
      if (Date.now() > deadline) throw new Error(`not consumed: ${await groupLag(client)} messages left`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const top = (await http().get('/boards/ord/top?limit=100').expect(200)).body.items as Array<{
      item: string;
      score: number;
    }>;
    expect(Object.fromEntries(top.map((row) => [row.item, row.score]))).toEqual(Object.fromEntries(expected));
    expect(await client.xlen('ord-in:dead')).toBe(tooOld);
    // The case this test is about happened: parts were refused behind the part before them.
    const refused = /errorstat_TB_INGEST_ORDER:count=(\d+)/.exec(await client.info('errorstats'));
    expect(Number(refused?.[1] ?? 0)).toBeGreaterThan(0);
  });
});
