import calculateSlot from 'cluster-key-slot';
import { Cluster } from 'ioredis';
import request from 'supertest';
import { CounterStore } from '../../../src/counters/counters.store';
import { StatsStore } from '../../../src/stats/stats.store';
import { createBoard } from '../../../harness/app';
import { FaultProxy } from '../../support/fault-proxy';
import { useClusterApp, useSingleNodeApp } from '../../support/e2e';

const T0 = 1_700_000_000_000;

/** Retried writes over HTTP, through a proxy that can lose Redis' answer after the write ran. */
describe('retry-safe writes (Idempotency-Key)', () => {
  let proxy: FaultProxy;
  const e2e = useSingleNodeApp({
    startMs: T0,
    // No background traffic through the proxy: the next reply it drops is the request's own.
    env: async (server) => {
      proxy = await FaultProxy.start(Number(new URL(server.url).port));
      return {
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        STATS_FLUSH_INTERVAL_MS: '60000',
        REDIS_AUTO_PIPELINING: 'false',
      };
    },
    boards: ['b'],
  });
  const { clock, http } = e2e;
  afterAll(() => proxy.close());
  const increment = (item: string, amount: number, key?: string) => {
    const call = http().post(`/boards/b/items/${item}/increment`).send({ amount });
    return key === undefined ? call : call.set('Idempotency-Key', key);
  };
  const scoreOf = async (item: string) => (await http().get(`/boards/b/items/${item}`)).body.score;

  /** Polls readiness until the app has reconnected through the proxy (real I/O, not the clock). */
  async function reconnected(): Promise<void> {
    for (let attempt = 0; attempt < 200; attempt++) {
      if ((await http().get('/health/ready')).status === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the app never reconnected through the proxy');
  }

  it('without a key, a write whose answer was lost counts twice when retried (why keys exist)', async () => {
    await reconnected();
    proxy.dropNextReply();
    expect((await increment('plain', 5)).body.code).toBe('REDIS_UNAVAILABLE');
    await reconnected();
    expect((await increment('plain', 5)).status).toBe(200);
    expect(await scoreOf('plain')).toBe(10);
  });

  it('with a key, the retry of a write whose answer was lost applies nothing and answers the first answer', async () => {
    await reconnected();
    proxy.dropNextReply();
    const lost = await increment('safe', 5, 'order-1');
    expect([lost.status, lost.body.code]).toEqual([503, 'REDIS_UNAVAILABLE']);
    await reconnected();
    const retried = await increment('safe', 5, 'order-1');
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.body.windows['1h']).toEqual({ score: 5, rank: 2, previousRank: null }); // 'plain' holds 10
    const again = await increment('safe', 5, 'order-1');
    expect(again.text).toBe(retried.text); // byte for byte
    expect(await scoreOf('safe')).toBe(5);
  });

  it('answers the first answer byte for byte, and a different request with the key is a 422', async () => {
    const first = await increment('x', 2, 'k-2');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    await increment('x', 1); // the score moves on
    const repeat = await increment('x', 2, 'k-2');
    expect(repeat.text).toBe(first.text);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    const reused = await increment('x', 3, 'k-2');
    expect([reused.status, reused.body.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    expect((await increment('y', 2, 'k-2')).status).toBe(422); // another item is another request
    expect(await scoreOf('x')).toBe(3);
  });

  it('applies concurrent requests with one key once', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => increment('c', 7, 'same')));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    expect(answers.filter((answer) => answer.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
    expect(await scoreOf('c')).toBe(7);
  });

  it('makes every write route retry-safe: batch, like, unlike, counter, stats', async () => {
    const twice = async (send: () => request.Test) => {
      const first = await send();
      const second = await send();
      expect(first.status).toBe(200);
      expect(second.text).toBe(first.text);
      expect(second.headers['idempotent-replayed']).toBe('true');
      return first;
    };
    const key = (name: string) => ({ 'Idempotency-Key': name });
    await twice(() =>
      http()
        .post('/boards/b/increments')
        .set(key('batch'))
        .send({ items: [{ item: 'p', amount: 2 }, { item: 'q' }] }),
    );
    await twice(() => http().post('/boards/b/items/p/likes').set(key('like')).send({ userId: 'u' }));
    await twice(() => http().delete('/boards/b/items/p/likes/u').set(key('unlike')));
    expect(await scoreOf('p')).toBe(2);
    expect(await scoreOf('q')).toBe(1);
    const counted = await twice(() => http().post('/counters/hits/increment').set(key('hit')).send({ count: 3 }));
    clock.advanceMs(2000);
    expect((await http().post('/counters/hits/increment').set(key('hit')).send({ count: 3 })).text).toBe(counted.text);
    const samples = (await http().get('/counters/hits?precision=1')).body.samples;
    expect(samples).toEqual([{ t: counted.body.at, count: 3 }]);
    await twice(() => http().post('/stats/ctx/T').set(key('stat')).send({ value: 0.5 }));
    expect((await http().get('/stats/ctx/T')).body).toMatchObject({ count: 1, sum: 0.5 });
  });

  it('on a sharded board a repeat answers byte for byte (board-wide rank included), and a reused key is refused on any shard', async () => {
    await createBoard(e2e.app(), 'sh', { windows: [{ period: '1h', interval: '1m' }], shards: 4 });
    const write = (item: string, amount: number, key: string) =>
      http().post(`/boards/sh/items/${item}/increment`).set('Idempotency-Key', key).send({ amount });
    const first = await write('mine', 5, 'sharded-1');
    expect(first.body.windows['1h']).toEqual({ score: 5, rank: 1, previousRank: null });
    // Items on every shard overtake it: a recomputed rank would now be 9.
    for (let i = 0; i < 8; i++) await http().post(`/boards/sh/items/other-${i}/increment`).send({ amount: 10 });
    const repeat = await write('mine', 5, 'sharded-1');
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.text).toBe(first.text);
    // The same key for other items (whatever shard they live on) is another request.
    for (let i = 0; i < 8; i++) expect((await write(`elsewhere-${i}`, 5, 'sharded-1')).status).toBe(422);
    const batch = { items: [{ item: 'b1' }, { item: 'b2' }, { item: 'b3' }, { item: 'b4' }] };
    const firstBatch = await http().post('/boards/sh/increments').set('Idempotency-Key', 'sharded-batch').send(batch);
    const otherBatch = await http()
      .post('/boards/sh/increments')
      .set('Idempotency-Key', 'sharded-batch')
      .send({ items: [{ item: 'b5' }] });
    expect([firstBatch.status, otherBatch.status, otherBatch.body.code]).toEqual([200, 422, 'IDEMPOTENCY_KEY_REUSED']);
    expect((await http().get('/boards/sh/items/mine')).body.score).toBe(5);
  });

  it('scopes keys per board and per counter', async () => {
    await createBoard(e2e.app(), 'other');
    expect(
      (await http().post('/boards/other/items/x/increment').set('Idempotency-Key', 'k-2').send({ amount: 2 })).headers[
        'idempotent-replayed'
      ],
    ).toBeUndefined();
    const a = await http().post('/counters/a/increment').set('Idempotency-Key', 'shared').send({});
    const b = await http().post('/counters/b/increment').set('Idempotency-Key', 'shared').send({});
    expect([a.headers['idempotent-replayed'], b.headers['idempotent-replayed']]).toEqual([undefined, undefined]);
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(129)],
    ['not printable ASCII', 'clé'],
  ])('refuses a malformed key (%s) with 400', async (_, value) => {
    const answer = await http().post('/boards/b/items/z/increment').set('Idempotency-Key', value).send({});
    expect([answer.status, answer.body.code]).toEqual([400, 'INVALID_INPUT']);
    expect(answer.body.message).toMatch(/Idempotency-Key/);
  });

  it('forgets a key after the retention (IDEMPOTENCY_TTL_SEC, default 24 h)', async () => {
    await increment('old', 1, 'daily');
    clock.advanceMs(24 * 3_600_000 - 1000);
    expect((await increment('old', 1, 'daily')).headers['idempotent-replayed']).toBe('true');
    clock.advanceMs(2000);
    expect((await increment('old', 1, 'daily')).headers['idempotent-replayed']).toBeUndefined();
  });
});

/** The same fault on a Cluster: one proxy per node (REDIS_CLUSTER_NAT_MAP sends the app through them). */
describe('retry-safe writes on a Cluster', () => {
  const proxies = new Map<string, FaultProxy>();
  const e2e = useClusterApp({
    startMs: T0,
    env: async (server) => {
      for (const node of server.env.REDIS_CLUSTER_NODES.split(','))
        proxies.set(node, await FaultProxy.start(Number(node.split(':')[1])));
      const through = [...proxies].map(([node, proxy]) => [node, `127.0.0.1:${proxy.port}`]);
      return {
        REDIS_CLUSTER_NODES: through.map(([, proxied]) => proxied).join(','),
        REDIS_CLUSTER_NAT_MAP: through.map(([node, proxied]) => `${node}=${proxied}`).join(','),
        STATS_FLUSH_INTERVAL_MS: '60000',
        // The write must outlive ioredis' reconnect and re-send even on a loaded machine: a 503 here
        // would make the client send again, and a second request without a key counts again.
        REDIS_COMMAND_TIMEOUT_MS: '10000',
      };
    },
    boards: ['b'],
  });
  const { http } = e2e;
  afterAll(async () => {
    for (const proxy of proxies.values()) await proxy.close();
  });
  const increment = (item: string, amount: number, key?: string) => {
    const call = http().post(`/boards/b/items/${item}/increment`).send({ amount });
    return key === undefined ? call : call.set('Idempotency-Key', key);
  };

  const ownerOfBoard = () => {
    const { prefix, client } = e2e.redis();
    const slot = calculateSlot(`{${prefix}board:b}:cfg`);
    return proxies.get(client instanceof Cluster ? client.slots[slot][0] : '');
  };
  /** Sends once: the service itself must get the answer through the lost reply. */
  const answered = async (send: () => request.Test): Promise<request.Response> => {
    const answer = await send();
    expect([answer.status, answer.body.code]).toEqual([200, undefined]);
    return answer;
  };

  it('a keyed write whose answer was lost is applied once, however often it is sent again', async () => {
    ownerOfBoard()?.dropNextReply();
    const first = await answered(() => increment('safe', 5, 'cluster-1'));
    expect(first.status).toBe(200);
    const again = await increment('safe', 5, 'cluster-1');
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await http().get('/boards/b/items/safe')).body.score).toBe(5);
  });

  it("a write without a key whose answer was lost is applied once: ioredis' re-send is a replay of the service's own key", async () => {
    ownerOfBoard()?.dropNextReply();
    const first = await answered(() => increment('plain', 5));
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined(); // the request's own answer, not a repeat's
    expect(first.body.windows['1h'].score).toBe(5);
    expect((await http().get('/boards/b/items/plain')).body.score).toBe(5);
    expect((await increment('plain', 1)).body.windows['1h'].score).toBe(6);
  });

  it('every write route is guarded the same way: batch, like, counter, stats', async () => {
    const { client } = e2e.redis();
    const ownerOf = (hashTagged: string) =>
      proxies.get(client instanceof Cluster ? client.slots[calculateSlot(hashTagged)][0] : '');
    const lost = async (tag: string, send: () => request.Test) => {
      ownerOf(tag)?.dropNextReply();
      expect((await answered(send)).status).toBe(200);
    };
    await lost(`{${e2e.redis().prefix}board:b}:cfg`, () =>
      http()
        .post('/boards/b/increments')
        .send({ items: [{ item: 'batch', amount: 2 }] }),
    );
    await lost(`{${e2e.redis().prefix}board:b}:cfg`, () =>
      http().post('/boards/b/items/liked/likes').send({ userId: 'u' }),
    );
    expect((await http().get('/boards/b/items/batch')).body.score).toBe(2);
    expect((await http().get('/boards/b/items/liked')).body.score).toBe(1);
    await lost(e2e.app().get(CounterStore).keys.knownOf('hits'), () =>
      http().post('/counters/hits/increment').send({ count: 3 }),
    );
    const counted = await http().get('/counters/hits?precision=1d');
    expect(counted.body.samples.reduce((sum: number, sample: { count: number }) => sum + sample.count, 0)).toBe(3);
    await lost(e2e.app().get(StatsStore).keys.current('ctx', 'T'), () =>
      http().post('/stats/ctx/T').send({ value: 0.5 }),
    );
    expect((await http().get('/stats/ctx/T')).body).toMatchObject({ count: 1, sum: 0.5 });
  });
});
