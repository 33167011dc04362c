import request from 'supertest';
import { createBoard } from '../../../harness/app';
import { RESEND_GUARD_MS } from '../../../src/common/limits';
import { validateConfig } from '../../../src/common/config';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { callEntries } from '../../../src/ranking/core/write-cost';
import { SEGMENTED_SPLIT_BOARD, SEGMENTED_SPLIT_COSTED } from '../../support/boards';
import { useClusterApp, useSingleNodeApp } from '../../support/e2e';

const VICTIM = 'victim-secret-0123456789';
const ATTACKER = 'attacker-secret-0123456789';
const THRIFTY = 'thrifty-secret-0123456789';
const SHARDER = 'sharder-secret-0123456789';
const SPLITTER = 'splitter-secret-0123456789';
const KEYS = [VICTIM, ATTACKER, THRIFTY, SHARDER, SPLITTER].map((secret) => `${secret}:read+write`).join(',');

/** A batch of 25 entries with a new actor each on SEGMENTED_SPLIT_BOARD: 3 calls, each storing its answer. */
const SPLIT_ITEMS = Array.from({ length: 25 }, (_, n) => ({ item: `i${n}`, amount: 1, actor: `a${n}` }));

/** The calls a shard's part of SPLIT_ITEMS goes in (write-cost.ts callEntries at the default bound). */
function splitCalls(): number {
  const bound = validateConfig({}).WRITE_COST_PER_CALL;
  let calls = 0;
  for (let at = 0; at < SPLIT_ITEMS.length; calls++) at += callEntries(SPLIT_ITEMS, at, SEGMENTED_SPLIT_COSTED, bound);
  return calls;
}

/** Issue #22 rows 9 and 11: stored answers of keyed writes are budgeted, and keys are scoped per client. */
describe('idempotency keys: scoped per client, stored answers budgeted', () => {
  /** `budget`: the same Redis through an app whose clients may each store 4 answers per hour. */
  const e2e = useSingleNodeApp({
    env: { API_KEYS: KEYS },
    others: { budget: { QUOTA_IDEMPOTENT_ANSWERS: '4' } },
  });
  const { clock, http } = e2e;
  const as = (secret: string) => ({ Authorization: `Bearer ${secret}` });
  const budgeted = () => request(e2e.other('budget').getHttpServer());
  const increment = (secret: string, board: string, item: string, amount: number, key?: string) => {
    const call = budgeted().post(`/boards/${board}/items/${item}/increment`).set(as(secret)).send({ amount });
    return key === undefined ? call : call.set('Idempotency-Key', key);
  };
  const scoreOf = async (board: string, item: string) =>
    (await http().get(`/boards/${board}/items/${item}`).set(as(VICTIM))).body.score;
  /** Answers every idempotency bucket of the file holds (fields of the `…:idem:<bucket>` hashes). */
  const storedAnswers = async () => {
    let fields = 0;
    for (const key of await e2e.redis().keys('*:idem:*')) fields += await e2e.redis().client.hlen(key);
    return fields;
  };

  beforeAll(async () => {
    await createBoard(e2e.app(), 'shared');
    await createBoard(e2e.app(), 'sharded', { windows: [{ period: '1h', interval: '1m' }], shards: 4 });
  });

  it("a key another client squatted neither refuses nor replays the victim's write (row 11)", async () => {
    const increment = (secret: string, board: string, item: string, amount: number, key: string) =>
      http()
        .post(`/boards/${board}/items/${item}/increment`)
        .set(as(secret))
        .set('Idempotency-Key', key)
        .send({ amount });
    const squat = await increment(ATTACKER, 'shared', 'decoy', 1, 'order-42');
    expect(squat.status).toBe(200);
    const other = await increment(VICTIM, 'shared', 'mine', 5, 'order-42'); // once 422 IDEMPOTENCY_KEY_REUSED
    expect([other.status, other.headers['idempotent-replayed']]).toEqual([200, undefined]);
    // The attacker also sends, under the victim's next key, the very request the victim will send.
    expect((await increment(ATTACKER, 'shared', 'mine', 5, 'order-43')).status).toBe(200);
    const same = await increment(VICTIM, 'shared', 'mine', 5, 'order-43'); // once a replay, never applied
    expect([same.status, same.headers['idempotent-replayed']]).toEqual([200, undefined]);
    expect(await scoreOf('shared', 'mine')).toBe(15);
    expect(await scoreOf('shared', 'decoy')).toBe(1);
    // Each client still gets its own answer back on a retry.
    const retried = await increment(VICTIM, 'shared', 'mine', 5, 'order-42');
    expect([retried.headers['idempotent-replayed'], retried.text]).toEqual(['true', other.text]);
  });

  it('scopes the ledger of a sharded board, counters and stats the same way (row 11)', async () => {
    const batch = { items: [{ item: 'b1' }, { item: 'b2' }, { item: 'b3' }] };
    const send = (secret: string, body: object) =>
      http().post('/boards/sharded/increments').set(as(secret)).set('Idempotency-Key', 'batch-1').send(body);
    expect((await send(ATTACKER, { items: [{ item: 'b9' }] })).status).toBe(200);
    const victims = await send(VICTIM, batch);
    expect([victims.status, victims.headers['idempotent-replayed']]).toEqual([200, undefined]);
    expect(await scoreOf('sharded', 'b2')).toBe(1);

    const count = (secret: string) =>
      http().post('/counters/hits/increment').set(as(secret)).set('Idempotency-Key', 'tick').send({ count: 2 });
    expect((await count(ATTACKER)).status).toBe(200);
    expect((await count(VICTIM)).headers['idempotent-replayed']).toBeUndefined();
    const samples = (await http().get('/counters/hits?precision=1').set(as(VICTIM))).body.samples;
    expect(samples).toEqual([{ t: expect.any(Number), count: 4 }]);

    const record = (secret: string, value: number) =>
      http().post('/stats/ctx/T').set(as(secret)).set('Idempotency-Key', 'stat').send({ value });
    expect((await record(ATTACKER, 1)).status).toBe(200);
    expect((await record(VICTIM, 2)).status).toBe(200); // once 422
    expect((await http().get('/stats/ctx/T').set(as(VICTIM))).body).toMatchObject({ count: 2, sum: 3 });
  });

  it('refuses a keyed write past the quota of stored answers before applying it; its stored answers still replay (row 9)', async () => {
    await createBoard(e2e.app(), 'budget');
    const before = await storedAnswers();
    const first = await increment(THRIFTY, 'budget', 'x', 1, 'k-0');
    for (let i = 1; i < 4; i++) expect((await increment(THRIFTY, 'budget', 'x', 1, `k-${i}`)).status).toBe(200);
    for (let i = 4; i < 20; i++) {
      const refused = await increment(THRIFTY, 'budget', 'x', 1, `k-${i}`);
      expect([refused.status, refused.body.code]).toEqual([429, 'QUOTA_EXCEEDED']);
      expect(refused.body.message).toContain('stored answers');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await scoreOf('budget', 'x')).toBe(4); // nothing of the refused writes applied
    expect(await storedAnswers()).toBe(before + 4); // and nothing of them stored
    const replay = await increment(THRIFTY, 'budget', 'x', 1, 'k-0');
    expect([replay.status, replay.headers['idempotent-replayed'], replay.text]).toEqual([200, 'true', first.text]);
    expect((await increment(THRIFTY, 'budget', 'x', 1)).status).toBe(200); // without a key: nothing stored
    const refusedOther = await budgeted()
      .post('/counters/c/increment')
      .set(as(THRIFTY))
      .set('Idempotency-Key', 'c-1')
      .send({ count: 1 });
    expect(refusedOther.body.code).toBe('QUOTA_EXCEEDED');
    expect((await increment(VICTIM, 'budget', 'x', 1, 'k-5')).status).toBe(200); // other clients keep theirs
    // The quota refills over QUOTA_INTERVAL_SEC (one answer per 15 min here).
    clock.advanceMs(15 * 60_000);
    expect((await increment(THRIFTY, 'budget', 'x', 1, 'k-after')).status).toBe(200);
  });

  it('charges a write on a sharded board its ledger entry and each shard part (row 9)', async () => {
    const write = (key: string) =>
      budgeted().post('/boards/sharded/items/s/increment').set(as(SHARDER)).set('Idempotency-Key', key).send({});
    expect((await write('s-1')).status).toBe(200);
    expect((await write('s-2')).status).toBe(200);
    const refused = await write('s-3');
    expect([refused.status, refused.body.code]).toEqual([429, 'QUOTA_EXCEEDED']);
    expect((await write('s-1')).headers['idempotent-replayed']).toBe('true');
    expect(await scoreOf('sharded', 's')).toBe(2);
  });

  it('charges a keyed batch an answer for each call its shard part goes in (issue #45)', async () => {
    await createBoard(e2e.app(), 'split', SEGMENTED_SPLIT_BOARD);
    expect(splitCalls()).toBe(3);
    const batch = () =>
      budgeted()
        .post('/boards/split/increments')
        .set(as(SPLITTER))
        .set('Idempotency-Key', 'split-1')
        .send({ items: SPLIT_ITEMS });
    const top = async () => (await http().get('/boards/split/top?window=w0&limit=100').set(as(VICTIM))).body.items;
    // Two of the 4 answers spent: the batch's 3 calls are refused before anything runs.
    for (const key of ['p-1', 'p-2']) expect((await increment(SPLITTER, 'shared', 'p', 1, key)).status).toBe(200);
    const before = await storedAnswers();
    const refused = await batch();
    expect([refused.status, refused.body.code]).toEqual([429, 'QUOTA_EXCEEDED']);
    expect(refused.body.message).toContain('would create 3;');
    expect(await top()).toEqual([]);
    expect(await storedAnswers()).toBe(before);
    // A third answer refilled (one per 15 min): the batch applies, storing its 3 answers, and none is left.
    e2e.clock.advanceMs(15 * 60_000);
    const applied = await batch();
    expect([applied.status, applied.body.count]).toEqual([200, 25]);
    expect(await storedAnswers()).toBe(before + 3);
    expect(await top()).toHaveLength(25);
    const next = await increment(SPLITTER, 'shared', 'p', 1, 'p-3');
    expect([next.status, next.body.code]).toEqual([429, 'QUOTA_EXCEEDED']);
    // Its retry replays every call, charged nothing.
    const replay = await batch();
    expect([replay.status, replay.headers['idempotent-replayed'], replay.text]).toEqual([200, 'true', applied.text]);
  });
});

/**
 * Issue #45: on a Cluster a write without a key carries a key of the service's own, whose answer Redis
 * keeps RESEND_GUARD_MS (60 s): it costs that share of a 24 h answer (1/1440), on every write route.
 */
describe('idempotency keys: the own keys of a Cluster write are budgeted', () => {
  const e2e = useClusterApp({ env: { QUOTA_IDEMPOTENT_ANSWERS: '1' } });
  const { http } = e2e;
  const perDay = 86_400;
  const ownKeySec = RESEND_GUARD_MS / 1000;
  const scoreOf = async (board: string, item: string) =>
    (await http().get(`/boards/${board}/items/${item}`)).body.score;
  const counted = async () => {
    const samples = (await http().get('/counters/keyless?precision=1d')).body.samples as Array<{ count: number }>;
    return samples.reduce((sum, sample) => sum + sample.count, 0);
  };

  beforeAll(async () => {
    await createBoard(e2e.app(), 'one');
    await createBoard(e2e.app(), 'three', { windows: [{ period: '1h', interval: '1m' }], shards: 3 });
  });

  it('charges each call a write without a key makes 60 s of an answer, and refuses one past the quota with nothing applied', async () => {
    // A keyed write kept all but 9.5 minutes of a day leaves the quota of one answer 9.5 own keys' worth.
    const keyed = await http()
      .post('/boards/one/items/k/increment')
      .set('Idempotency-Key', 'drain')
      .set('Idempotency-Retention', String(perDay - 9.5 * ownKeySec))
      .send({});
    expect(keyed.status).toBe(200);
    // One item on each of the three shards: the batch stores an answer on each (3 own keys).
    const spread = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].filter(
      (item, i, all) => all.findIndex((other) => shardOf(other, 3) === shardOf(item, 3)) === i,
    );
    expect(spread).toHaveLength(3);
    const keyless = [
      () => http().post('/boards/one/items/x/increment').send({}),
      () =>
        http()
          .post('/boards/one/increments')
          .send({ items: [{ item: 'x' }] }),
      () => http().post('/boards/one/items/x/likes').send({ userId: 'u' }),
      () => http().post('/counters/keyless/increment').send({ count: 1 }),
      () => http().post('/stats/ctx/T').send({ value: 1 }),
      () =>
        http()
          .post('/boards/three/increments')
          .send({ items: spread.map((item) => ({ item })) }),
      // 8 own keys charged so far, 1.5 left: the next write without a key is the last one admitted.
      () => http().post('/boards/three/items/y/increment').send({}),
    ];
    for (const send of keyless) {
      const answer = await send();
      expect([answer.status, answer.body.code]).toEqual([200, undefined]);
    }
    const refusals = [
      await http().post('/boards/one/items/x/increment').send({}),
      await http().post('/counters/keyless/increment').send({ count: 1 }),
    ];
    for (const refused of refusals) {
      expect([refused.status, refused.body.code]).toEqual([429, 'QUOTA_EXCEEDED']);
      expect(refused.body.message).toContain('stored answers');
      expect(refused.body.message).toContain('would create 0.000694;');
    }
    expect(await scoreOf('one', 'x')).toBe(3); // increment, batch, like: the refused increment not applied
    expect(await counted()).toBe(1);
    expect(await scoreOf('three', 'y')).toBe(1);
    // Half an own key is left; the other half refills in 1.25 s (one answer per hour).
    expect(refusals[0].headers['retry-after']).toBe('2');
    e2e.clock.advanceMs(2_000);
    expect((await http().post('/boards/one/items/x/increment').send({})).status).toBe(200);
    expect(await scoreOf('one', 'x')).toBe(4);
  });

  it('charges a batch without a key each call its shard part goes in, 60 s of an answer each', async () => {
    await createBoard(e2e.app(), 'split', SEGMENTED_SPLIT_BOARD);
    expect(splitCalls()).toBe(3);
    const batch = () => http().post('/boards/split/increments').send({ items: SPLIT_ITEMS });
    e2e.clock.advanceMs(3_600_000); // the quota of one answer refilled
    const keyed = await http()
      .post('/boards/one/items/k/increment')
      .set('Idempotency-Key', 'drain-split')
      .set('Idempotency-Retention', String(perDay - 2.5 * ownKeySec))
      .send({});
    expect(keyed.status).toBe(200);
    // 2.5 own keys left: the batch's 3 calls are refused before anything runs.
    const refused = await batch();
    expect([refused.status, refused.body.code]).toEqual([429, 'QUOTA_EXCEEDED']);
    expect(refused.body.message).toContain('would create 0.00208;');
    const top = async () => (await http().get('/boards/split/top?window=w0&limit=100')).body.items;
    expect(await top()).toEqual([]);
    // One more own key refilled (2.5 s): 3.5 left, the batch takes 3 and a single call's one is short.
    e2e.clock.advanceMs(2_500);
    expect((await batch()).status).toBe(200);
    expect(await top()).toHaveLength(25);
    const short = await http().post('/boards/one/items/x/increment').send({});
    expect([short.status, short.body.code]).toEqual([429, 'QUOTA_EXCEEDED']);
  });
});
