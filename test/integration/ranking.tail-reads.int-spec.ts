import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Cluster } from 'ioredis';
import request from 'supertest';
import { ADMIN, startTestApp } from '../../harness/app';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../harness/redis';
import { TAIL_CALLS_PER_READ, TAIL_LOOKS_PER_EXPIRE_FIELD } from '../../src/ranking/options/tail/tail.option';

/**
 * A tail read's filter looks are bounded per call (issue #45): on a board whose rows each need a look at
 * eight pruned slots, an app draining one field a call (EXPIRE_CHUNK 1: 20 filter bits a call) reads at
 * most TAIL_CALLS_PER_READ calls' bits per read, answers every row a true bound meanwhile (the shard's
 * hidden mass where its bits did not reach), and, read after read, ends with the answer of an app whose
 * calls reach every row at once, on a twin board of the same events.
 */
const T0 = 1_700_002_800_000;
const MINUTE_MS = 60_000;
const KEPT = 30;
const BACK = 5;

interface Row {
  item: string;
  score: number;
  rank: number;
  bound: number;
}

describe.each(TOPOLOGIES)('tail reads: filter bits bounded per call, bounds true meanwhile (#45, %s)', (topology) => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let small: NestFastifyApplication;
  let large: NestFastifyApplication;
  const truth = new Map<string, number>();

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    small = await startTestApp(redis, clock, { EXPIRE_CHUNK: '1' });
    large = await startTestApp(redis, clock, { EXPIRE_CHUNK: '1000' });
    for (const name of ['tiny', 'twin'])
      await request(large.getHttpServer())
        .put(`/admin/boards/${name}`)
        .set(ADMIN)
        .send({ windows: [{ name: 'w', period: '10m', interval: '1m' }], tail: { exact: 5, below: 2 } })
        .expect(201);
    // Nine minutes: each a slot of 40 one-hit items (pruned once closed) and the kept items, each counting 2 or more.
    for (let minute = 0; minute < 9; minute++) {
      const items = [
        ...Array.from({ length: 40 }, (_, i) => ({ item: `once-${minute}-${i}`, amount: 1 })),
        ...Array.from({ length: KEPT }, (_, i) => ({ item: `kept-${i}`, amount: 2 + i + (minute % 2) })),
        // Pruned from the first minute, listed from the last: the lowest rows, which lost a count.
        ...(minute === 0 || minute === 8
          ? Array.from({ length: BACK }, (_, i) => ({ item: `back-${i}`, amount: minute === 0 ? 1 : 9 }))
          : []),
      ];
      for (const entry of items) truth.set(entry.item, (truth.get(entry.item) ?? 0) + entry.amount);
      for (const name of ['tiny', 'twin'])
        await request(large.getHttpServer()).post(`/boards/${name}/increments`).send({ items }).expect(200);
      clock.advanceMs(MINUTE_MS);
    }
    // The closed slots pruned (reads prune within their expiry budget), the twin's rows learnt at once.
    for (let i = 0; i < 20; i++) await top(large, 'twin');
  }, 120_000);

  afterAll(async () => {
    await small.close();
    await large.close();
    await redis.stop();
  });

  async function top(app: NestFastifyApplication, board: string): Promise<Row[]> {
    const answer = await request(app.getHttpServer())
      .get(`/boards/${board}/top?window=w&limit=${KEPT + BACK}`)
      .expect(200);
    return answer.body.items as Row[];
  }

  /** GETBITs every node (a Cluster's masters) ran so far. */
  const bitsRead = async () => {
    const nodes = redis.client instanceof Cluster ? redis.client.nodes('master') : [redis.client];
    const stats = await Promise.all(nodes.map((node) => node.info('commandstats')));
    return stats.reduce((sum, text) => sum + Number(/cmdstat_getbit:calls=(\d+)/.exec(text)?.[1] ?? 0), 0);
  };

  it('reads at most its calls of bits, answers true bounds on the way, and ends with the full answer', async () => {
    const expected = await top(large, 'twin');
    expect(expected.filter((row) => row.bound === 0).length).toBeGreaterThan(0);
    // A call: its looks, a row's last slot may pass them by 3 bits, and pruning its one field checks 4.
    const perRead = TAIL_CALLS_PER_READ * (TAIL_LOOKS_PER_EXPIRE_FIELD + 3 + 4);
    let reads = 0;
    let rows: Row[];
    let loose = 0;
    do {
      const before = await bitsRead();
      rows = await top(small, 'tiny');
      expect((await bitsRead()) - before).toBeLessThanOrEqual(perRead);
      for (const row of rows) {
        expect(truth.get(row.item)).toBeGreaterThanOrEqual(row.score);
        expect(truth.get(row.item)).toBeLessThanOrEqual(row.score + row.bound);
      }
      if (reads === 0) loose = rows.filter((row) => row.bound > 1).length;
      reads++;
    } while (JSON.stringify(rows) !== JSON.stringify(expected) && reads < 40);
    expect(rows).toEqual(expected);
    // Each read's calls answered its page part by part from a page its first call kept, then dropped it.
    expect(await redis.dataKeys('board:tiny}*tailpage:*')).toEqual([]);
    // The first read could not reach every row: some answered the hidden mass.
    expect(loose).toBeGreaterThan(0);
    expect(expected.filter((row) => row.item.startsWith('back-') && row.bound > 0)).toHaveLength(BACK);
    expect(reads).toBeGreaterThan(1);
  });
});
