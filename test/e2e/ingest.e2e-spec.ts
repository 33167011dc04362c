import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import Redis from 'ioredis';
import { ADMIN, createBoard } from '../../harness/app';
import { startTestNats, TestNats } from '../support/nats';
import { useSingleNodeApp } from '../support/e2e';
import { INGEST_APPLY_WRITES } from '../../src/ingest/ingest.limits';
import { IngestStore } from '../../src/ingest/ingest.store';

const T0 = 1_700_002_800_000;
const INGEST_ENV = { INGEST_REFRESH_MS: '100', INGEST_LEASE_MS: '3000', INGEST_WAIT_MS: '50' };

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  last?: () => Promise<unknown>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await last?.())}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('stream ingest over HTTP (single)', () => {
  let nats: TestNats;
  // Its own Redis: the source streams are outside the file's prefix.
  const e2e = useSingleNodeApp({ ownRedis: true, startMs: T0, env: INGEST_ENV });
  const { http } = e2e;
  const sources = async () => (await http().get('/admin/ingest').set(ADMIN).expect(200)).body.sources;
  const top = async (board: string) =>
    Object.fromEntries(
      (
        (await http().get(`/boards/${board}/top?limit=100`).expect(200)).body.items as Array<{
          item: string;
          score: number;
        }>
      ).map((row) => [row.item, row.score]),
    );

  /** Waits until the source `name` has applied or dead-lettered `messages` messages and has no lag; answers it. */
  const handled = (name: string, messages: number) =>
    until(
      `every message of ${name} handled`,
      async () => {
        const source = (await sources()).find((s: { name: string }) => s.name === name);
        return source && source.applied + source.deadLettered === messages && source.lag === 0 ? source : undefined;
      },
      sources,
    );

  beforeAll(async () => {
    nats = await startTestNats();
  });
  afterAll(() => nats.stop());

  it('declares, lists and deletes sources; refuses bad declarations', async () => {
    await http().put('/admin/ingest/a').send({ kind: 'redis-stream', stream: 's' }).expect(401);
    const bad = await http().put('/admin/ingest/a').set(ADMIN).send({ kind: 'kafka', stream: 's' }).expect(400);
    expect(bad.body.code).toBe('INVALID_INPUT');
    expect(bad.body.message).toContain('kind');
    expect(
      (await http().put('/admin/ingest/a').set(ADMIN).send({ kind: 'nats', stream: 's' }).expect(400)).body.message,
    ).toBe('servers is required for a nats source');
    expect(
      (
        await http()
          .put('/admin/ingest/a')
          .set(ADMIN)
          .send({ kind: 'nats', stream: 's', servers: nats.url, url: 'redis://x:1' })
          .expect(400)
      ).body.message,
    ).toBe('url does not apply to a nats source');
    await http().put('/admin/ingest/a%7Bb').set(ADMIN).send({ kind: 'redis-stream', stream: 's' }).expect(400);
    await http().put('/admin/ingest/a').set(ADMIN).send({ kind: 'redis-stream', stream: 's', extra: 1 }).expect(400);

    const created = await http()
      .put('/admin/ingest/a')
      .set(ADMIN)
      .send({ kind: 'redis-stream', stream: 'idle' })
      .expect(201);
    expect(created.body).toMatchObject({
      name: 'a',
      declaration: { kind: 'redis-stream', stream: 'idle' },
      applied: 0,
      deadLettered: 0,
    });
    await http().put('/admin/ingest/a').set(ADMIN).send({ kind: 'redis-stream', stream: 'idle' }).expect(200);
    const conflict = await http()
      .put('/admin/ingest/a')
      .set(ADMIN)
      .send({ kind: 'nats', stream: 'x', servers: nats.url })
      .expect(409);
    expect(conflict.body.code).toBe('INGEST_SOURCE_CONFLICT');
    expect((await sources()).map((s: { name: string }) => s.name)).toEqual(['a']);
    await http().delete('/admin/ingest/a').set(ADMIN).expect(204);
    expect((await http().delete('/admin/ingest/a').set(ADMIN).expect(404)).body.code).toBe('INGEST_SOURCE_NOT_FOUND');
    expect(await sources()).toEqual([]);
  });

  it('counts a Redis stream once and dead-letters each bad entry once, with its reason and payload', async () => {
    await createBoard(e2e.app(), 'rs');
    await http()
      .put('/admin/boards/capped')
      .set(ADMIN)
      .send({ windows: [{ period: '1h', interval: '1m' }], maxItems: 1 })
      .expect(201);
    await http()
      .put('/admin/boards/best')
      .set(ADMIN)
      .send({ windows: [{ period: '1h', interval: '1m' }], aggregate: 'max' })
      .expect(201);
    const client = e2e.redis().client as Redis;
    const events = [
      { item: 'x' },
      { item: 'y', amount: 3 },
      { board: 'rs', item: 'x', amount: 2, at: T0 / 1000 - 60 },
      { item: 'x', at: T0 / 1000 - 7200 }, // older than the window: AT_OUT_OF_SPAN
      { board: 'nope', item: 'x' }, // unknown board
      { item: 'x', amount: 0 }, // invalid field
      { item: 'x', actor: 'u1' }, // a board without actors: INVALID
      { board: 'capped', item: 'first' },
      { board: 'capped', item: 'second' }, // BOARD_FULL
      { board: 'best', item: 'x', amount: 2 }, // a max board takes scores: AGGREGATE_MISMATCH
    ];
    for (const event of events) await client.xadd('in', '*', 'event', JSON.stringify(event));
    await client.xadd('in', '*', 'event', 'not json');
    await client.xadd('in', '*', 'other', '1');
    await http()
      .put('/admin/ingest/rs')
      .set(ADMIN)
      .send({ kind: 'redis-stream', stream: 'in', board: 'rs' })
      .expect(201);

    const done = await handled('rs', 12);
    expect(done).toMatchObject({ applied: 4, deadLettered: 8, lastError: null });
    expect(await top('rs')).toEqual({ x: 3, y: 3 });
    expect(await top('capped')).toEqual({ first: 1 });
    expect(await top('best')).toEqual({});
    const dead = (await client.xrange('in:dead', '-', '+')).map(([, fields]) => Object.fromEntries(chunk(fields)));
    expect(dead.map((d) => d.reason.split(':')[0]).sort()).toEqual(
      [
        'AGGREGATE_MISMATCH',
        'AT_OUT_OF_SPAN',
        'BOARD_FULL',
        'BOARD_NOT_FOUND',
        'INVALID',
        'INVALID',
        'INVALID',
        'NOT_JSON',
      ].sort(),
    );
    expect(dead.find((d) => d.reason.startsWith('NOT_JSON'))).toMatchObject({ source: 'rs', payload: 'not json' });
    expect(await client.xpending('in', 'trendboard')).toEqual([0, null, null, null]);

    // Entries added later are consumed by the running source.
    await client.xadd('in', '*', 'event', JSON.stringify({ item: 'z', amount: 5 }));
    await until('the new entry', async () => ((await top('rs')).z === 5 ? true : undefined));
    // The source counts its events once their call has answered, a moment after Redis holds them.
    const metrics = await until('the new entry counted', async () => {
      const text = (await http().get('/metrics').expect(200)).text;
      return /trendboard_ingest_applied_total\{source="rs"\} 5/.test(text) ? text : undefined;
    });
    expect(metrics).toMatch(/trendboard_ingest_applied_total\{source="rs"\} 5/);
    expect(metrics).toMatch(/trendboard_ingest_dead_lettered_total\{source="rs"\} 8/);
    expect(metrics).toMatch(/trendboard_ingest_lag_messages\{source="rs"\} \d+/);
    await http().delete('/admin/ingest/rs').set(ADMIN).expect(204);
  });

  it('applies a shard part in calls of at most INGEST_APPLY_WRITES event-window writes, in order, each event once', async () => {
    await http()
      .put('/admin/boards/wide')
      .set(ADMIN)
      .send({
        windows: [
          { period: '1h', interval: '1m' },
          { period: '1d', interval: '1h' },
          { period: '7d', interval: '1d' },
        ],
      })
      .expect(201);
    // The real store, observed: how many events each apply call carried.
    const store = e2e.app().get(IngestStore);
    const carried: number[] = [];
    const apply = store.apply.bind(store);
    jest.spyOn(store, 'apply').mockImplementation((part) => {
      carried.push(part.entries.length);
      return apply(part);
    });
    const client = e2e.redis().client as Redis;
    const expected: Record<string, number> = {};
    const pipeline = client.pipeline();
    for (let n = 0; n < 1000; n++) {
      const item = `w${(n * 7) % 90}`;
      expected[item] = (expected[item] ?? 0) + 1 + (n % 3);
      pipeline.xadd('wide-in', '*', 'event', JSON.stringify({ item, amount: 1 + (n % 3) }));
    }
    await pipeline.exec();
    await http()
      .put('/admin/ingest/wide')
      .set(ADMIN)
      .send({ kind: 'redis-stream', stream: 'wide-in', board: 'wide' })
      .expect(201);
    expect((await handled('wide', 1000)).applied).toBe(1000);
    const callEvents = Math.floor(INGEST_APPLY_WRITES / 3);
    expect(Math.max(...carried)).toBeLessThanOrEqual(callEvents);
    expect(carried.reduce((sum, events) => sum + events, 0)).toBe(1000);
    expect(carried.length).toBeGreaterThanOrEqual(Math.ceil(1000 / callEvents));
    expect(await top('wide')).toEqual(expected);
    jest.restoreAllMocks();
    await http().delete('/admin/ingest/wide').set(ADMIN).expect(204);
  });

  it('counts messages in their segments; dead-letters a new segment past segments.max and segments a board does not take', async () => {
    await createBoard(e2e.app(), 'seg', { windows: [{ period: '1h', interval: '1m' }], segments: { max: 2 } });
    await createBoard(e2e.app(), 'plain');
    const client = e2e.redis().client as Redis;
    const events = [
      { item: 'x', amount: 2, segments: ['en'] },
      { item: 'y', segments: ['en', 'us'] },
      { item: 'x' },
      { item: 'y', segments: ['fr'] }, // a third live segment: SEGMENT_LIMIT
      { board: 'plain', item: 'x', segments: ['en'] }, // a board without segments: INVALID
      { item: 'x', segments: ['en', 'en'] }, // INVALID
    ];
    for (const event of events) await client.xadd('seg-in', '*', 'event', JSON.stringify(event));
    await http()
      .put('/admin/ingest/seg')
      .set(ADMIN)
      .send({ kind: 'redis-stream', stream: 'seg-in', board: 'seg' })
      .expect(201);
    await handled('seg', 6);
    const segmentTop = async (segment: string) =>
      Object.fromEntries(
        (
          (await http().get(`/boards/seg/top?segment=${segment}`).expect(200)).body.items as Array<{
            item: string;
            score: number;
          }>
        ).map((row) => [row.item, row.score]),
      );
    expect(await top('seg')).toEqual({ x: 3, y: 1 });
    expect(await segmentTop('en')).toEqual({ x: 2, y: 1 });
    expect(await segmentTop('us')).toEqual({ y: 1 });
    expect(await segmentTop('fr')).toEqual({});
    const reasons = (await client.xrange('seg-in:dead', '-', '+')).map(([, fields]) =>
      String(Object.fromEntries(chunk(fields)).reason),
    );
    expect(reasons.map((reason) => reason.split(':')[0]).sort()).toEqual(['INVALID', 'INVALID', 'SEGMENT_LIMIT']);
    expect(reasons).toContainEqual(expect.stringContaining('board "plain" takes no segments'));
    await http().delete('/admin/ingest/seg').set(ADMIN).expect(204);
  });

  it("counts an actor's events as HTTP increments with that actor; dead-letters a blocked actor and an actor on a board without actors", async () => {
    const board = {
      windows: [{ name: 'hour', period: '1h', interval: '1m' }],
      views: [{ name: 'people', mode: 'unique', window: 'hour' }],
      segments: { max: 2 },
      actors: true,
    };
    await createBoard(e2e.app(), 'act', board);
    await createBoard(e2e.app(), 'act-http', board);
    await createBoard(e2e.app(), 'no-act');
    await http().post('/admin/boards/act/retractions').set(ADMIN).send({ actor: 'spam', block: '1h' }).expect(202);
    const client = e2e.redis().client as Redis;
    const counted = [
      { item: 'x', actor: 'u1' },
      { item: 'x', amount: 2, actor: 'u2', segments: ['en'] },
      { item: 'x', actor: 'u1', segments: ['en'] },
      { item: 'y', amount: 4 },
      { item: 'y', actor: 'u3' },
    ];
    const events = [
      ...counted.slice(0, 3),
      { item: 'x', actor: 'spam' }, // blocked: RETRACTED
      { item: 'x', actor: '\uff33PAM ' }, // the same actor's block key (full width, case, a space): RETRACTED
      { board: 'no-act', item: 'x', actor: 'u1' }, // a board without actors: INVALID
      ...counted.slice(3),
    ];
    for (const event of events) await client.xadd('act-in', '*', 'event', JSON.stringify(event));
    await http()
      .put('/admin/ingest/act')
      .set(ADMIN)
      .send({ kind: 'redis-stream', stream: 'act-in', board: 'act' })
      .expect(201);
    const done = await handled('act', events.length);
    expect(done).toMatchObject({ applied: 5, deadLettered: 3 });
    for (const { item, ...body } of counted)
      await http().post(`/boards/act-http/items/${item}/increment`).send(body).expect(200);
    const read = async (name: string, query: string) =>
      (await http().get(`/boards/${name}/top?${query}`).expect(200)).body.items;
    for (const query of ['window=hour', 'window=people', 'window=hour&segment=en', 'window=people&segment=en'])
      expect([query, await read('act', query)]).toEqual([query, await read('act-http', query)]);
    expect(await top('act')).toEqual({ x: 4, y: 5 });
    expect(await read('act', 'window=people')).toMatchObject([
      { item: 'x', score: 2 },
      { item: 'y', score: 1 },
    ]);
    expect(await top('no-act')).toEqual({});
    const reasons = (await client.xrange('act-in:dead', '-', '+')).map(([, fields]) =>
      String(Object.fromEntries(chunk(fields)).reason),
    );
    // Dead letters are written concurrently: their order is not the messages'.
    expect(reasons.sort()).toEqual([
      'INVALID: actor: board "no-act" keeps no actors; declare "actors": true on the board to send one',
      `RETRACTED: actor: its events are refused until ${new Date(T0 + 3_600_000).toISOString()} (a retraction blocked it)`,
      `RETRACTED: actor: its events are refused until ${new Date(T0 + 3_600_000).toISOString()} (a retraction blocked it)`,
    ]);
    await http().delete('/admin/ingest/act').set(ADMIN).expect(204);
  });

  it('counts a JetStream stream once, dead letters on their subject', async () => {
    await createBoard(e2e.app(), 'ns');
    const connection = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(connection);
    await jsm.streams.add({ name: 'EV', subjects: ['ev.>'] });
    await jsm.streams.add({ name: 'DEAD', subjects: ['dead.ev'] });
    const js = jsm.jetstream();
    for (const payload of [
      { item: 'a' },
      { item: 'b', amount: 4 },
      'oops',
      { board: 'gone', item: 'a' },
      { item: 'a', amount: 2 },
    ])
      await js.publish('ev.x', typeof payload === 'string' ? payload : JSON.stringify(payload));
    await http()
      .put('/admin/ingest/ns')
      .set(ADMIN)
      .send({ kind: 'nats', servers: nats.url, stream: 'EV', board: 'ns', deadLetter: 'dead.ev' })
      .expect(201);
    await until(
      'every message handled',
      async () => {
        const [source] = await sources();
        return source.applied === 3 && source.deadLettered === 2 ? source : undefined;
      },
      sources,
    );
    expect(await top('ns')).toEqual({ a: 3, b: 4 });
    const dead = await jsm.streams.info('DEAD');
    expect(dead.state.messages).toBe(2);
    const first = JSON.parse((await jsm.streams.getMessage('DEAD', { seq: 1 }))!.string()) as {
      reason: string;
      payload: string;
    };
    expect(first).toMatchObject({ payload: 'oops' });
    expect(first.reason).toMatch(/^NOT_JSON/);
    await http().delete('/admin/ingest/ns').set(ADMIN).expect(204);
    await connection.close();
  });
});

function chunk(fields: string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < fields.length; i += 2) pairs.push([fields[i], fields[i + 1]]);
  return pairs;
}
