import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { ADMIN, createBoard, startTestApp } from '../../harness/app';
import { FakeClock } from '../../harness/clock';
import { startTestRedis, TestRedis, TOPOLOGIES } from '../../harness/redis';
import { BOARDS } from '../../harness/worst-case/boards';
import { WRITE_CALL_COMMANDS } from '../../harness/worst-case/harness';
import { validateConfig } from '../../src/common/config';
import { segmentsWithin } from '../../src/ranking/core/write-cost';
import { BoardCache } from '../../src/ranking/boards/board-cache';
import { ExpiryStore } from '../../src/ranking/expiry/expiry.store';
import { RankingScheduler } from '../../src/ranking/expiry/ranking.scheduler';
import { RetractionService } from '../../src/ranking/retraction/retraction.service';
import { LikeTakeBacks } from '../../src/ranking/writes/like-take-backs';
import { WritesStore } from '../../src/ranking/writes/writes.store';
import { scriptCallCommands } from '../support/script-calls';

/**
 * The take-back of a like stored past the write bound (issue #45): a like in 8 segments on a board of
 * every option, liked through an instance of a higher WRITE_COST_PER_CALL, is taken back by a default
 * instance over calls of at most WRITE_CALL_COMMANDS commands each (counted from the SLOWLOG at 0 µs),
 * and leaves the board as a twin that never got the like; stopped midway, the record it leaves is
 * finished by the next unlike, a retry of the same keyed request, a like of the same user and item, or
 * the scheduler's next pass (its sweep), in the same bounded calls, however the windows expired meanwhile.
 */
const T0 = 1_700_006_400_000;
const SEGMENTS = Array.from({ length: 8 }, (_, k) => `s${k}`);
const BOARD = { ...BOARDS['wc-sum'], windows: BOARDS['wc-sum'].windows.map((w) => ({ ...w, snapshots: undefined })) };

/** The most segments a like may name on that board within the default bound. */
const WITHIN = segmentsWithin(
  { actor: 'u' },
  { ...BOARD, actors: true, capPerItem: BOARD.actors.capPerItem },
  validateConfig({}).WRITE_COST_PER_CALL,
);

/** id, time, µs, arguments, client address, client name. */

/** Every key of a board (its name replaced) with what it holds, numbers as numbers. */
async function dump(redis: TestRedis, board: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of (await redis.dataKeys(`board:${board}}*`)).sort()) {
    const name = key.replace(`board:${board}}`, 'board:B}');
    // The config holds the board's versions, bumped by every write.
    if (name.endsWith('}:cfg')) continue;
    const type = await redis.client.type(key);
    // ties: first orders an item by when it reached its score (order_lib): any write of it marks it anew.
    if (type === 'zset' && name.endsWith(':order'))
      out[name] = unmarked(await redis.client.zrange(key, 0, -1, 'WITHSCORES'));
    else if (type === 'zset') out[name] = pairs(await redis.client.zrange(key, 0, -1, 'WITHSCORES'));
    else if (type === 'hash') out[name] = numbers(await redis.client.hgetall(key));
    else if (type === 'string') out[name] = await redis.client.get(key);
    else if (type === 'set') out[name] = (await redis.client.smembers(key)).sort();
    else out[name] = type;
  }
  return out;
}

function pairs(flat: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]] = Number(flat[i + 1]);
  return out;
}

/** An order zset's items and scores, without the tie marks their members start with. */
function unmarked(flat: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i].replace(/^\d+/, '')] = Number(flat[i + 1]);
  return out;
}

function numbers(hash: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(hash).map(([k, v]) => [k, v !== '' && !isNaN(Number(v)) ? Number(v) : v]));
}

/** The results zsets of a dump: a board's and its segments' listings. */
function tops(dumped: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(dumped).filter(([key]) => key.endsWith(':top')));
}

/** Where two dumps differ beyond float rounding (a decay view adds and subtracts weights). */
function differences(a: Record<string, unknown>, b: Record<string, unknown>, at = ''): string[] {
  const out: string[] = [];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const [x, y] = [a[key], b[key]];
    if (typeof x === 'number' && typeof y === 'number') {
      if (Math.abs(x - y) > 1e-9 * Math.max(1, Math.abs(x), Math.abs(y))) out.push(`${at}${key}: ${x} != ${y}`);
    } else if (x && y && typeof x === 'object' && typeof y === 'object' && !Array.isArray(x)) {
      out.push(...differences(x as Record<string, unknown>, y as Record<string, unknown>, `${at}${key} `));
    } else if (JSON.stringify(x) !== JSON.stringify(y))
      out.push(`${at}${key}: ${JSON.stringify(x)} != ${JSON.stringify(y)}`);
  }
  return out;
}

describe.each(TOPOLOGIES)('the take-back of a like stored past the write bound (%s)', (topology) => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  /** An instance of a higher bound (the likes stored past the default one), and a default one. */
  let past: NestFastifyApplication;
  let app: NestFastifyApplication;
  let nodes: Redis[];
  const http = (on = app) => request(on.getHttpServer());
  const like = (board: string, userId: string, segments = SEGMENTS, on = past) =>
    http(on).post(`/boards/${board}/items/i2/likes`).send({ userId, segments }).expect(200);
  const unlike = (board: string, userId: string) => http().delete(`/boards/${board}/items/i2/likes/${userId}`);

  beforeAll(async () => {
    // A server of its own: the test reads every command it ran from its SLOWLOG.
    redis = await startTestRedis(topology, { own: true });
    past = await startTestApp(redis, clock, { WRITE_COST_PER_CALL: '1000000' });
    app = await startTestApp(redis, clock);
    nodes = 'nodes' in redis.client ? redis.client.nodes('master') : [redis.client];
    // The twin every take-back is compared to: never liked by u.
    await seeded('never');
  });
  afterAll(async () => {
    await app.close();
    await past.close();
    await redis.stop();
  });

  /** A board of every option, as another user's like and some increments left it. */
  async function seeded(board: string): Promise<void> {
    await createBoard(past, board, BOARD);
    await like(board, 'other');
    await http(past)
      .post(`/boards/${board}/increments`)
      .send({ items: [{ item: 'i2', amount: 3, actor: 'a', segments: SEGMENTS.slice(0, 3) }] })
      .expect(200);
  }

  /** The commands each like FCALL's script ran while `send` ran, in the order sent. */
  async function likeCalls(send: () => Promise<unknown>): Promise<number[]> {
    await Promise.all(nodes.map((node) => node.config('SET', 'slowlog-max-len', '100000')));
    await Promise.all(nodes.map((node) => node.config('SET', 'slowlog-log-slower-than', '0')));
    await Promise.all(nodes.map((node) => node.slowlog('RESET')));
    await send();
    await Promise.all(nodes.map((node) => node.config('SET', 'slowlog-log-slower-than', '10000')));
    return scriptCallCommands(nodes, /_like$/);
  }

  it('takes it back over calls each within WRITE_CALL_COMMANDS, the board as if never liked', async () => {
    await seeded('liked');
    await like('liked', 'u');
    // The default instance refuses such a like whole.
    await http().post('/boards/liked/items/i2/likes').send({ userId: 'v', segments: SEGMENTS }).expect(422);
    let body: { counted?: boolean } = {};
    const calls = await likeCalls(async () => ({ body } = await unlike('liked', 'u').expect(200)));
    expect(body.counted).toBe(true);
    // One call before: 1 591 commands on this board.
    expect(Math.max(...calls)).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
    expect(calls.length).toBeGreaterThan(1);
    expect(differences(await dump(redis, 'liked'), await dump(redis, 'never'))).toEqual([]);
    // Sent again: nothing left to take back.
    const again = await unlike('liked', 'u').expect(200);
    expect(again.body.counted).toBe(false);
    expect(differences(await dump(redis, 'liked'), await dump(redis, 'never'))).toEqual([]);
  });

  it('takes back a like within the bound in one call', async () => {
    expect(WITHIN).toBeGreaterThan(0);
    await seeded('light');
    await like('light', 'u', SEGMENTS.slice(0, WITHIN), app);
    const calls = await likeCalls(() => unlike('light', 'u').expect(200));
    expect(calls).toHaveLength(1);
  });

  describe('stopped after its first call', () => {
    /** An unlike whose instance stops after the first call: its record is left. */
    async function interrupted(board: string, key?: string): Promise<void> {
      const takeBacks = LikeTakeBacks.prototype as unknown as { finish: () => Promise<void> };
      const spy = jest.spyOn(takeBacks, 'finish').mockRejectedValueOnce(new Error('the instance stopped'));
      const sent = unlike(board, 'u');
      await (key === undefined ? sent : sent.set('Idempotency-Key', key)).expect(500);
      spy.mockRestore();
      expect(await redis.dataKeys(`board:${board}}:liketb`)).toHaveLength(1);
    }

    it('is finished by the next unlike, which subtracts nothing twice', async () => {
      await seeded('stopped');
      await like('stopped', 'u');
      await interrupted('stopped');
      const next = await unlike('stopped', 'u').expect(200);
      expect(next.body.counted).toBe(false);
      expect(await redis.dataKeys('board:stopped}:liketb')).toEqual([]);
      expect(differences(await dump(redis, 'stopped'), await dump(redis, 'never'))).toEqual([]);
    });

    it('is finished by the same keyed request sent again (its answer replayed)', async () => {
      await seeded('keyed');
      await like('keyed', 'u');
      await interrupted('keyed', 'take-back-1');
      await unlike('keyed', 'u').set('Idempotency-Key', 'take-back-1').expect(200);
      expect(differences(await dump(redis, 'keyed'), await dump(redis, 'never'))).toEqual([]);
    });

    it('is finished by a like of the same user and item, in bounded calls, which then counts once', async () => {
      await seeded('once');
      await like('once', 'u', SEGMENTS.slice(0, WITHIN), app);
      await seeded('relike');
      await like('relike', 'u');
      await interrupted('relike');
      // Through the default instance: the take-back's next calls, then the like.
      const calls = await likeCalls(async () => {
        const again = await like('relike', 'u', SEGMENTS.slice(0, WITHIN), app);
        expect(again.body.counted).toBe(true);
      });
      expect(calls.length).toBeGreaterThan(2);
      expect(Math.max(...calls)).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
      expect(await redis.dataKeys('board:relike}:liketb')).toEqual([]);
      expect(differences(await dump(redis, 'relike'), await dump(redis, 'once'))).toEqual([]);
    });
    it('refuses a like with 409 LIKE_TAKE_BACK_PENDING while finishing it does not settle it', async () => {
      await seeded('pending');
      await like('pending', 'u');
      await interrupted('pending');
      const takeBacks = LikeTakeBacks.prototype as unknown as { finish: () => Promise<void> };
      const spy = jest.spyOn(takeBacks, 'finish').mockResolvedValueOnce(undefined);
      const refused = await http().post('/boards/pending/items/i2/likes').send({ userId: 'u' }).expect(409);
      spy.mockRestore();
      expect(refused.body.code).toBe('LIKE_TAKE_BACK_PENDING');
      expect(await redis.dataKeys('board:pending}:liketb')).toHaveLength(1);
    });

    it('goes with its board', async () => {
      await seeded('dropped');
      await like('dropped', 'u');
      await interrupted('dropped');
      await http().delete('/admin/boards/dropped').set(ADMIN).expect(204);
      expect(await redis.dataKeys('board:dropped}*')).toEqual([]);
    });

    /** The board's sweep (LikeTakeBacks.sweep) on instance `on`, in at most `calls` calls: true when none is left. */
    const sweep = async (board: string, calls?: number, on = app) =>
      on.get(WritesStore).takeBacks.sweep(await on.get(BoardCache).get(board), clock.nowMs(), calls);

    it("is finished by the scheduler's next pass, in calls each within WRITE_CALL_COMMANDS", async () => {
      await seeded('swept');
      await like('swept', 'u');
      await interrupted('swept');
      const calls = await likeCalls(() => app.get(RankingScheduler).tick());
      expect(calls.length).toBeGreaterThan(1);
      expect(Math.max(...calls)).toBeLessThanOrEqual(WRITE_CALL_COMMANDS);
      expect(await redis.dataKeys('board:swept}:liketb')).toEqual([]);
      expect(differences(await dump(redis, 'swept'), await dump(redis, 'never'))).toEqual([]);
      expect((await unlike('swept', 'u').expect(200)).body.counted).toBe(false);
    });

    it('is swept in at most the calls a visit has, the rest on the next visit', async () => {
      await seeded('visits');
      await like('visits', 'u');
      await interrupted('visits');
      expect(await sweep('visits', 1)).toBe(false);
      expect(await redis.dataKeys('board:visits}:liketb')).toHaveLength(1);
      expect(await sweep('visits')).toBe(true);
      expect(differences(await dump(redis, 'visits'), await dump(redis, 'never'))).toEqual([]);
    });

    it('is taken back once by two instances sweeping it and an unlike at once', async () => {
      await seeded('twice');
      await like('twice', 'u');
      await interrupted('twice');
      const [a, b] = [app.get(RankingScheduler), past.get(RankingScheduler)];
      await Promise.all([sweep('twice'), sweep('twice'), sweep('twice', undefined, past), unlike('twice', 'u')]);
      await Promise.all([a.tick(), b.tick()]);
      expect(await redis.dataKeys('board:twice}:liketb')).toEqual([]);
      expect(differences(await dump(redis, 'twice'), await dump(redis, 'never'))).toEqual([]);
    });

    it.each([
      ['user', { kind: 'actor' as const, id: 'u' }],
      ['item', { kind: 'item' as const, id: 'i2' }],
    ])('is forgotten by a retraction of the %s, which takes its counts out once', async (what, target) => {
      const board = `retracted-${what}`;
      await seeded(board);
      await like(board, 'u');
      await interrupted(board);
      const retractions = app.get(RetractionService);
      const started = (await retractions.start(board, target)).body;
      await retractions.settled(board, started.id);
      expect(await redis.dataKeys(`board:${board}}:liketb`)).toEqual([]);
      const retracted = await dump(redis, board);
      // Without the user's like, as the twin; without the item, nothing of it.
      if (what === 'user') expect(differences(tops(retracted), tops(await dump(redis, 'never')))).toEqual([]);
      await unlike(board, 'u').expect(200);
      expect(differences(await dump(redis, board), retracted)).toEqual([]);
    });

    /** Drains what expired on each board, as the scheduler's expiry does. */
    async function drained(...boards: string[]): Promise<void> {
      for (const name of boards) {
        const board = await app.get(BoardCache).get(name);
        while ((await app.get(ExpiryStore).expire(board, clock.nowMs())).draining);
      }
    }

    // Last: the clock moves on past slot boundaries (the hour window's slots, then the six-hour one's,
    // the day's): each board drained there first, so a call that counted in a window whose slot expired
    // would leave a slot the twin lacks.
    it('leaves the board as the twin however its windows expired between its calls', async () => {
      await seeded('expiring');
      await seeded('expiring-twin');
      await like('expiring', 'u');
      await interrupted('expiring');
      for (const hours of [2, 5, 20]) {
        clock.advanceSec(hours * 3600);
        await drained('expiring', 'expiring-twin');
        expect(await sweep('expiring', 1)).toBe(false);
      }
      expect(await sweep('expiring')).toBe(true);
      expect(differences(await dump(redis, 'expiring'), await dump(redis, 'expiring-twin'))).toEqual([]);
    });
  });
});
