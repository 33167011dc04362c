import { Logger } from '@nestjs/common';
import request from 'supertest';
import { ApiKeysService } from '../../src/access/api-keys.service';
import { LiveHub, LiveListing } from '../../src/live/live-hub';
import { RankingService } from '../../src/ranking/ranking.service';
import { RedisService } from '../../src/redis/redis.service';
import { ADMIN, createBoard } from '../../harness/app';
import { useSingleNodeApp } from '../support/e2e';
import { listen, SseReader, waitUntil } from '../support/sse';

const T0 = 1_700_002_800_000;

describe("the poller's work is bounded and yields to requests", () => {
  const e2e = useSingleNodeApp({
    ownRedis: true,
    startMs: T0,
    env: {
      STREAM_COALESCE_MS: '60000',
      STREAM_MAX_PER_CLIENT: '100',
      QUOTA_NEW_ITEMS: '0',
      // Above a 32-shard stream's first read (32 version reads and 32 heads at once); the poller yields
      // at a quarter of it: 64 commands.
      REDIS_MAX_PENDING_COMMANDS: '256',
      // A frozen Redis fails the polls of the test that logs them at this deadline; setting boards up
      // on a loaded CI machine has taken over 400 ms.
      REDIS_COMMAND_TIMEOUT_MS: '1000',
    },
  });
  let hub: LiveHub;
  let ranking: RankingService;
  let base = '';
  const readers: SseReader[] = [];
  const open = async (path: string) => {
    const reader = await SseReader.open(`${base}${path}`);
    readers.push(reader);
    await reader.waitFor(1);
    return reader;
  };
  const increment = (board: string, item: string) =>
    request(e2e.app().getHttpServer()).post(`/boards/${board}/items/${item}/increment`).send({}).expect(200);
  const spy = <K extends 'changeVersion' | 'top'>(method: K) => jest.spyOn(ranking, method);

  beforeAll(async () => {
    base = await listen(e2e.app());
    hub = e2e.app().get(LiveHub);
    ranking = e2e.app().get(RankingService);
  });
  beforeEach(() => e2e.redis().clear());
  afterEach(async () => {
    jest.restoreAllMocks();
    for (const reader of readers.splice(0)) reader.close();
    await waitUntil(() => hub.clients === 0);
  });

  it('reads a window once per row bucket (10, 25, 50, 100) whatever the limits, each client its own rows', async () => {
    await createBoard(e2e.app(), 'limits');
    await request(e2e.app().getHttpServer())
      .post('/boards/limits/increments')
      .send({ items: Array.from({ length: 60 }, (_, i) => ({ item: `i${i}`, amount: 100 - i })) })
      .expect(200);
    const clients = [];
    for (let limit = 1; limit <= 40; limit++) clients.push(await open(`/boards/limits/stream?limit=${limit}`));
    const tops = spy('top');
    await increment('limits', 'i0');
    await hub.tick();
    expect(tops.mock.calls.map((call) => call[3]).sort((a, b) => a - b)).toEqual([10, 25, 50]);
    await Promise.all(clients.map((client) => client.waitFor(2)));
    expect(clients.map((client) => client.named<LiveListing>('top')[0].items.length)).toEqual(
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
  });

  it('plans at most 256 commands a tick and takes the other boards in turn', async () => {
    // 32 shards x (1 version read + 4 groups) = 160 commands a board: one board a tick.
    for (const board of ['s1', 's2', 's3']) {
      await createBoard(e2e.app(), board, { windows: [{ period: '1h', interval: '1m' }], shards: 32 });
      for (const limit of [1, 11, 26, 51]) await open(`/boards/${board}/stream?limit=${limit}`);
    }
    const versions = spy('changeVersion');
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const polled = [];
    for (let tick = 0; tick < 4; tick++) {
      versions.mockClear();
      await hub.tick();
      polled.push(versions.mock.calls.map((call) => call[0]));
    }
    expect(polled.map((boards) => boards.length)).toEqual([1, 1, 1, 1]);
    expect(new Set(polled.slice(0, 3).flat())).toEqual(new Set(['s1', 's2', 's3']));
    expect(polled[3]).toEqual(polled[0]);
    expect(warn).not.toHaveBeenCalled();
  });

  it("skips its tick while Redis is behind with this instance's commands, and polls again once it caught up", async () => {
    await createBoard(e2e.app(), 'shed');
    await open('/boards/shed/stream');
    const versions = spy('changeVersion');
    const warn = jest.spyOn(Logger.prototype, 'warn');
    const client = e2e.app().get(RedisService).client;
    e2e.redis().freeze!();
    let pings: Promise<unknown>;
    try {
      pings = Promise.all(Array.from({ length: 80 }, () => client.ping()));
      await hub.tick();
      expect(versions).not.toHaveBeenCalled();
      expect(warn.mock.calls.filter(([message]) => /skipped/.test(String(message)))).toHaveLength(1);
    } finally {
      e2e.redis().thaw!();
    }
    await pings;
    await hub.tick();
    expect(versions).toHaveBeenCalledTimes(1);
  });

  it('logs one line for a tick whose board polls all fail, not one per board', async () => {
    for (let i = 0; i < 5; i++) {
      await createBoard(e2e.app(), `down${i}`);
      await open(`/boards/down${i}/stream`);
    }
    const warn = jest.spyOn(Logger.prototype, 'warn');
    e2e.redis().freeze!();
    try {
      await hub.tick();
      await hub.tick();
    } finally {
      e2e.redis().thaw!();
    }
    const lines = warn.mock.calls.filter(([message]) => /poll/.test(String(message)));
    expect(lines).toHaveLength(1);
    expect(String(lines[0][0])).toMatch(/^5 of 5 live board polls failed/);
    expect(hub.clients).toBe(5);
  });
});

describe('a revoked key ends its streams', () => {
  // Two instances of one deployment: both apps of a test on the same Redis.
  const e2e = useSingleNodeApp({ startMs: T0, env: { STREAM_COALESCE_MS: '60000' }, noApp: true });
  const readers: SseReader[] = [];
  afterEach(() => {
    for (const reader of readers.splice(0)) reader.close();
  });

  it('at once on the instance that revoked it, at the next key refresh on another', async () => {
    const here = await e2e.startApp();
    const there = await e2e.startApp();
    await createBoard(here, 'secret');
    const made = await request(here.getHttpServer())
      .post('/admin/keys')
      .set(ADMIN)
      .send({ name: 'viewer', scopes: ['read'] })
      .expect(201);
    const key = (made.body as { key: string }).key;
    await there.get(ApiKeysService).reload();
    for (const app of [here, there]) {
      const reader = await SseReader.open(`${await listen(app)}/boards/secret/stream`, {
        authorization: `Bearer ${key}`,
      });
      readers.push(reader);
      await reader.waitFor(1);
    }
    await request(here.getHttpServer()).delete('/admin/keys/viewer').set(ADMIN).expect(204);
    await readers[0].waitForEnd();
    expect(readers[1].ended).toBe(false);
    // What the refresh job does every API_KEYS_REFRESH_MS.
    await there.get(ApiKeysService).reload();
    await readers[1].waitForEnd();
    expect([here.get(LiveHub).clients, there.get(LiveHub).clients]).toEqual([0, 0]);
  });
});
