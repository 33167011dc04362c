import { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { ADMIN, startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { RankingService } from '../../../src/ranking/ranking.service';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../../harness/redis';

const T0 = 1_700_002_800_000;
const PASS = { leaseMs: 30_000, claimBatch: 10 };
const WINDOWS = [
  { name: 'w', period: '1m', interval: '20s' },
  { name: 'all', allTime: true },
];

interface Row {
  item: string;
  score: number;
  group?: string;
  data?: unknown;
}

/**
 * On a max / min / last board a score of 0 (or below) is a score the window holds: the item keeps
 * its data and its group while a window lists it, through later writes and expiries, and loses them
 * once no window holds it. On a sum board a sum reaching 0 leaves the window, data and group too.
 */
describe.each(TOPOLOGIES)('items held with scores of any sign keep their data and group (%s)', (topology) => {
  let redis: TestRedis;
  let app: NestFastifyApplication;
  const clock = new FakeClock(T0);
  const http = () => request(app.getHttpServer());
  let board = 0;

  beforeAll(async () => {
    redis = await startTestRedis(topology);
    app = await startTestApp(redis, clock);
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  const rows = async (name: string, window: string): Promise<Row[]> => {
    const page = await http().get(`/boards/${name}/top?window=${window}&data=true`).expect(200);
    return (page.body.items as Row[]).map(({ item, score, group, data }) => ({ item, score, group, data }));
  };
  const looked = async (name: string, window: string, items: string[]) => {
    const answer = await http().post(`/boards/${name}/lookup?data=true`).send({ window, items }).expect(200);
    return (answer.body.items as Row[]).map(({ item, score, data }) => ({ item, score, data }));
  };
  const write = (name: string, items: Array<Record<string, unknown>>) =>
    http().post(`/boards/${name}/increments`).send({ items }).expect(200);
  const putData = (name: string, item: string, data: object) =>
    http().put(`/boards/${name}/items/${item}/data`).send(data).expect(204);

  it.each(['max', 'last'] as const)(
    '%s: a 0 or negative score keeps data and group until it leaves',
    async (aggregate) => {
      const name = `hs${board++}`;
      clock.setMs(T0);
      const settings = { windows: WINDOWS, aggregate, groups: true, maxItems: 100 };
      await http().put(`/admin/boards/${name}`).set(ADMIN).send(settings).expect(201);
      await write(name, [
        { item: 'z', score: 0, group: 'g0' },
        { item: 'n', score: -3, group: 'g1' },
      ]);
      await putData(name, 'z', { z: 1 });
      await putData(name, 'n', { n: 1 });
      clock.advanceSec(20);
      await write(name, [{ item: 'p', score: 5, group: 'g2' }]);
      const held = [
        { item: 'p', score: 5, group: 'g2', data: null },
        { item: 'z', score: 0, group: 'g0', data: { z: 1 } },
        { item: 'n', score: -3, group: 'g1', data: { n: 1 } },
      ];
      expect(await rows(name, 'w')).toEqual(held);
      // The first slot expires: z and n leave w, the all-time window still holds them.
      clock.advanceSec(45);
      await write(name, [{ item: 'q', score: 1 }]);
      expect(await rows(name, 'w')).toEqual([
        { item: 'p', score: 5, group: 'g2', data: null },
        { item: 'q', score: 1, group: undefined, data: null },
      ]);
      expect(await rows(name, 'all')).toEqual([
        held[0],
        { item: 'q', score: 1, group: undefined, data: null },
        held[1],
        held[2],
      ]);
      expect(await looked(name, 'all', ['z', 'n'])).toEqual([
        { item: 'z', score: 0, data: { z: 1 } },
        { item: 'n', score: -3, data: { n: 1 } },
      ]);
      for (const [item, rank, score, data] of [
        ['z', 3, 0, { z: 1 }],
        ['n', 4, -3, { n: 1 }],
      ] as const) {
        const read = await http().get(`/boards/${name}/items/${item}?window=all&data=true`).expect(200);
        expect(read.body).toMatchObject({ item, rank, score, data });
        expect(read.body.hidden).toBeUndefined();
      }
      await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
    },
  );

  it.each(['max', 'min', 'last'] as const)(
    '%s: a score moving to 0 keeps data and group, expiry of their last slot takes them',
    async (aggregate) => {
      const name = `hs${board++}`;
      clock.setMs(T0);
      const windows = [{ name: 'w', period: '1m', interval: '20s' }];
      await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, aggregate, groups: true }).expect(201);
      // z's first score is the window's until the first slot expires (max, min), or until the next (last).
      await write(name, [
        { item: 'p', score: 5, group: 'g2' },
        { item: 'z', score: aggregate === 'min' ? -1 : 5, group: 'g0' },
        { item: 'n', score: -3, group: 'g1' },
      ]);
      await putData(name, 'z', { z: 1 });
      await putData(name, 'n', { n: 1 });
      clock.advanceSec(20);
      await write(name, [
        { item: 'z', score: 0 },
        { item: 'n', score: -3 },
      ]);
      // The first slot expires (the scheduler's pass, no read or write): z's score becomes 0, p leaves.
      clock.advanceSec(45);
      await app.get(RankingService).expireDue(PASS);
      expect(await rows(name, 'w')).toEqual([
        { item: 'z', score: 0, group: 'g0', data: { z: 1 } },
        { item: 'n', score: -3, group: 'g1', data: { n: 1 } },
      ]);
      // Their own slot expires: they leave, with their data and group.
      clock.advanceSec(20);
      await app.get(RankingService).expireDue(PASS);
      expect(await rows(name, 'w')).toEqual([]);
      await write(name, [
        { item: 'z', score: 2 },
        { item: 'n', score: 1 },
      ]);
      expect(await rows(name, 'w')).toEqual([
        { item: 'z', score: 2, group: undefined, data: null },
        { item: 'n', score: 1, group: undefined, data: null },
      ]);
      await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
    },
  );

  it.each([1, 3])(
    'max: hidden items holding 0 or below read as hidden, as the lookup says (%i shard(s))',
    async (shards) => {
      const name = `hs${board++}`;
      clock.setMs(T0);
      const windows = [{ name: 'w', period: '1m', interval: '20s' }];
      await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, aggregate: 'max', shards }).expect(201);
      await write(name, [
        { item: 'p', score: 4 },
        { item: 'z', score: 0 },
        { item: 'n', score: -3 },
      ]);
      const moderate = async (state: 'hidden' | 'allowed') => {
        for (const item of ['p', 'z', 'n'])
          await http().put(`/admin/boards/${name}/moderation/items/${item}`).set(ADMIN).send({ state }).expect(204);
      };
      const reads = async () => {
        const answers = [];
        for (const item of ['p', 'z', 'n', 'absent']) {
          const { score, rank, hidden } = (await http().get(`/boards/${name}/items/${item}`).expect(200)).body;
          answers.push({ item, score, rank, hidden });
        }
        return answers;
      };
      await moderate('hidden');
      expect(await reads()).toEqual([
        { item: 'p', score: 4, rank: null, hidden: true },
        { item: 'z', score: 0, rank: null, hidden: true },
        { item: 'n', score: -3, rank: null, hidden: true },
        { item: 'absent', score: 0, rank: null, hidden: undefined },
      ]);
      const lookup = await http()
        .post(`/boards/${name}/lookup`)
        .send({ items: ['z', 'absent'] })
        .expect(200);
      expect(lookup.body.items.map((row: Row & { hidden?: true }) => row.hidden)).toEqual([true, undefined]);
      await moderate('allowed');
      expect(await reads()).toEqual([
        { item: 'p', score: 4, rank: 1, hidden: undefined },
        { item: 'z', score: 0, rank: 2, hidden: undefined },
        { item: 'n', score: -3, rank: 3, hidden: undefined },
        { item: 'absent', score: 0, rank: null, hidden: undefined },
      ]);
      await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
    },
  );

  it('sum: an item whose sum returns to 0 leaves with its data and group', async () => {
    const name = `hs${board++}`;
    clock.setMs(T0);
    const windows = [{ name: 'w', period: '1m', interval: '20s' }];
    await http().put(`/admin/boards/${name}`).set(ADMIN).send({ windows, groups: true }).expect(201);
    await write(name, [
      { item: 'z', amount: 2, group: 'g0' },
      { item: 'p', amount: 3, group: 'g2' },
    ]);
    await putData(name, 'z', { z: 1 });
    await write(name, [{ item: 'z', amount: -2 }]);
    expect(await rows(name, 'w')).toEqual([{ item: 'p', score: 3, group: 'g2', data: null }]);
    await write(name, [{ item: 'z', amount: 1 }]);
    expect(await rows(name, 'w')).toEqual([
      { item: 'p', score: 3, group: 'g2', data: null },
      { item: 'z', score: 1, group: undefined, data: null },
    ]);
    await http().delete(`/admin/boards/${name}`).set(ADMIN).expect(204);
  });
});
