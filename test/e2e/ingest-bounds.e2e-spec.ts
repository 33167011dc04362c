import Redis from 'ioredis';
import { ADMIN, createBoard } from '../../harness/app';
import { useSingleNodeApp } from '../support/e2e';
import { DEAD_LETTER_BYTES, DEAD_LETTER_HELD_BYTES, DEAD_LETTER_PAYLOAD_BYTES } from '../../src/ingest/ingest.limits';
import { until } from '../support/until';

const T0 = 1_700_002_800_000;
const INGEST_ENV = { INGEST_REFRESH_MS: '100', INGEST_LEASE_MS: '3000', INGEST_WAIT_MS: '50' };

/** What an admin-declared source may reach, and what its dead letters may hold. */
describe('ingest bounds (single)', () => {
  // Its own Redis: the source streams are outside the file's prefix.
  const e2e = useSingleNodeApp({ ownRedis: true, startMs: T0, env: INGEST_ENV });
  const { http } = e2e;
  const declare = (name: string, body: object) => http().put(`/admin/ingest/${name}`).set(ADMIN).send(body);

  it('refuses a source on a host that is not loopback, the service Redis or INGEST_ALLOWED_HOSTS', async () => {
    const remote = await declare('far', { kind: 'redis-stream', stream: 's', url: 'redis://10.20.30.40:6380' }).expect(
      400,
    );
    expect(remote.body).toMatchObject({ code: 'INVALID_INPUT' });
    expect(remote.body.message).toMatch(/10\.20\.30\.40:6380 is not a host/);
    const nats = await declare('n', {
      kind: 'nats',
      stream: 'S',
      servers: 'nats://127.0.0.1:4222,nats://nats.example.com',
    });
    expect(nats.status).toBe(400);
    expect(nats.body.message).toMatch(/nats\.example\.com:4222/);
    await declare('near', { kind: 'redis-stream', stream: 's', url: 'redis://127.0.0.1:1' }).expect(201);
    await declare('own', { kind: 'redis-stream', stream: 's' }).expect(201);
    expect((await http().get('/admin/ingest').set(ADMIN).expect(200)).body.sources).toHaveLength(2);
    for (const name of ['near', 'own']) await http().delete(`/admin/ingest/${name}`).set(ADMIN).expect(204);
  });

  describe('with INGEST_ALLOWED_HOSTS', () => {
    // Declarations only (INGEST_ENABLED=false): the test connects to none of these hosts.
    const allowing = e2e.describeApp({
      INGEST_ALLOWED_HOSTS: 'nats.example.com, 10.20.30.40:6380',
      INGEST_ENABLED: 'false',
    });
    it('allows the hosts (any port) and host:port entries it names, nothing else', async () => {
      const put = (name: string, body: object) => allowing.http().put(`/admin/ingest/${name}`).set(ADMIN).send(body);
      await put('n', { kind: 'nats', stream: 'S', servers: 'nats://nats.example.com:5222' }).expect(201);
      await put('far', { kind: 'redis-stream', stream: 's', url: 'redis://10.20.30.40:6380' }).expect(201);
      await put('farther', { kind: 'redis-stream', stream: 's', url: 'redis://10.20.30.40:6381' }).expect(400);
      for (const name of ['n', 'far']) await allowing.http().delete(`/admin/ingest/${name}`).set(ADMIN).expect(204);
    });
  });

  it('keeps the dead letters of a source within DEAD_LETTER_HELD_BYTES, each payload cut', async () => {
    await createBoard(e2e.app(), 'b');
    const client = e2e.redis().client as Redis;
    const messages = 4000;
    // 4 000 bad messages of 5 000 bytes: 20 MB of payloads, more than the stream may keep.
    const payload = 'x'.repeat(5000);
    for (let sent = 0; sent < messages; sent += 500) {
      const pipeline = client.pipeline();
      for (let i = 0; i < 500; i++) pipeline.xadd('bad', '*', 'event', payload);
      await pipeline.exec();
    }
    await declare('bad', { kind: 'redis-stream', stream: 'bad', board: 'b' }).expect(201);
    await until(
      'every message dead-lettered',
      async () => {
        const sources = (await http().get('/admin/ingest').set(ADMIN).expect(200)).body.sources;
        return sources[0]?.deadLettered === messages && sources[0].lag === 0 ? true : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const bytes = Number(await client.call('MEMORY', 'USAGE', 'bad:dead', 'SAMPLES', '0'));
    expect(bytes).toBeLessThanOrEqual(DEAD_LETTER_HELD_BYTES);
    // Trimmed to the budget, not far below it: the newest dead letters that fit are all kept.
    expect(Number(await client.get('bad:dead:bytes'))).toBeLessThanOrEqual(DEAD_LETTER_BYTES);
    expect(await client.xlen('bad:dead')).toBeGreaterThan(
      (0.95 * DEAD_LETTER_BYTES) / (DEAD_LETTER_PAYLOAD_BYTES + 200),
    );
    const [[, fields]] = (await client.xrevrange('bad:dead', '+', '-', 'COUNT', 1)) as Array<[string, string[]]>;
    expect(fields[fields.indexOf('payload') + 1]).toHaveLength(DEAD_LETTER_PAYLOAD_BYTES);
    await http().delete('/admin/ingest/bad').set(ADMIN).expect(204);
  });
});
