import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import request from 'supertest';
import { createApp } from '../../src/bootstrap';
import { FakeClock } from '../../harness/clock';
import { ADMIN, ADMIN_TOKEN, createBoard, startTestApp } from '../../harness/app';
import { startTestRedis, TestRedis } from '../../harness/redis';
import { until } from '../support/until';

const T0 = 1_700_002_800_000;
const INGEST_ENV = { INGEST_REFRESH_MS: '100', INGEST_LEASE_MS: '3000', INGEST_WAIT_MS: '50' };
const ORDERS = { kind: 'redis-stream', stream: 'orders', board: 'cfg' };

interface Source {
  name: string;
  declaration: { board?: string };
  declaredAt: number;
  applied: number;
  lag: number | null;
}

describe('ingest sources declared by the configuration (INGEST_SOURCES, INGEST_SOURCES_FILE)', () => {
  let redis: TestRedis;
  const clock = new FakeClock(T0);
  const apps: NestFastifyApplication[] = [];
  const boot = async (env: Record<string, string>) => {
    const app = await startTestApp(redis, clock, { ...INGEST_ENV, ...env });
    apps.push(app);
    return app;
  };
  const sources = async (app: NestFastifyApplication): Promise<Source[]> =>
    (await request(app.getHttpServer()).get('/admin/ingest').set(ADMIN).expect(200)).body.sources;
  const scoreOf = async (app: NestFastifyApplication, item: string) =>
    (await request(app.getHttpServer()).get(`/boards/cfg/items/${item}`).expect(200)).body.score as number;

  beforeAll(async () => {
    redis = await startTestRedis('single', { own: true }); // the source streams are outside the prefix
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it.each([
    ['{"orders":{"kind":"redis-stream"}}', /INGEST_SOURCES\.orders\.stream: /],
    ['{"orders":{"kind":"kafka","stream":"s"}}', /INGEST_SOURCES\.orders\.kind: /],
    ['{"orders":{"kind":"redis-stream","stream":"s","colour":"red"}}', /INGEST_SOURCES\.orders\.colour: /],
    ['{"n":{"kind":"nats","stream":"S"}}', /INGEST_SOURCES\.n: servers is required for a nats source/],
    ['{"a{b":{"kind":"redis-stream","stream":"s"}}', /INGEST_SOURCES\.a\{b: a source name must be/],
    ['[1]', /INGEST_SOURCES: must be a JSON object/],
    ['{orders', /INGEST_SOURCES: not JSON/],
  ])('refuses to boot on %s, naming the source and field', async (sources, message) => {
    await expect(createApp({ env: { ...redis.env, ADMIN_TOKEN, INGEST_SOURCES: sources } })).rejects.toThrow(message);
  });

  it('refuses a file it cannot read, and both variables at once', async () => {
    await expect(
      createApp({ env: { ...redis.env, ADMIN_TOKEN, INGEST_SOURCES_FILE: '/nonexistent/sources.json' } }),
    ).rejects.toThrow(/INGEST_SOURCES_FILE: cannot read \/nonexistent\/sources.json \(ENOENT\)/);
    await expect(
      createApp({ env: { ...redis.env, ADMIN_TOKEN, INGEST_SOURCES: '{}', INGEST_SOURCES_FILE: '/x.json' } }),
    ).rejects.toThrow(/set one of them, not both/);
  });

  it('declares the sources at boot; a second instance with the same configuration changes nothing and counts nothing twice', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tb-sources-')), 'sources.json');
    writeFileSync(file, JSON.stringify({ orders: ORDERS }));
    const first = await boot({ INGEST_SOURCES_FILE: file });
    await createBoard(first, 'cfg');
    const client = redis.client as Redis;
    for (const amount of [1, 2, 3]) await client.xadd('orders', '*', 'event', JSON.stringify({ item: 'a', amount }));
    const declared = await until('the configured source consumed', async () => {
      const [source] = await sources(first);
      return source?.applied === 3 ? source : undefined;
    });
    expect(declared).toMatchObject({ name: 'orders', declaration: ORDERS });

    const second = await boot({ INGEST_SOURCES: JSON.stringify({ orders: ORDERS }) });
    for (const amount of [4, 5]) await client.xadd('orders', '*', 'event', JSON.stringify({ item: 'a', amount }));
    await until('the later entries', async () => ((await scoreOf(second, 'a')) === 15 ? true : undefined));
    // A batch's figures are recorded after its apply (and while the next batch is read): wait for them.
    const listed = await until('the later entries counted', async () => {
      const now = await sources(second);
      return now[0]?.applied === 5 ? now : undefined;
    });
    // Declared again by the second boot: the same declaration, so declaredAt and the totals stay.
    expect(listed).toEqual([expect.objectContaining({ name: 'orders', declaredAt: declared.declaredAt, applied: 5 })]);
    expect(await scoreOf(second, 'a')).toBe(15);
  });

  it('an admin change holds until the next boot, which puts the configuration back', async () => {
    const env = { INGEST_SOURCES: JSON.stringify({ orders: ORDERS }) };
    const app = await boot(env);
    await until('declared', async () => ((await sources(app)).length === 1 ? true : undefined));
    await request(app.getHttpServer())
      .put('/admin/ingest/orders')
      .set(ADMIN)
      .send({ ...ORDERS, board: 'other' })
      .expect(200);
    await new Promise((resolve) => setTimeout(resolve, 300)); // a few refreshes: nothing puts it back meanwhile
    expect((await sources(app))[0].declaration.board).toBe('other');
    await request(app.getHttpServer()).delete('/admin/ingest/orders').set(ADMIN).expect(204);
    expect(await sources(app)).toEqual([]);

    const rebooted = await boot(env);
    const [source] = await until('declared again', async () => {
      const listed = await sources(rebooted);
      return listed.length === 1 ? listed : undefined;
    });
    expect(source.declaration).toEqual(ORDERS);
  });
});
