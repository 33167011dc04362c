import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { ADMIN, startTestApp } from '../../../harness/app';
import { FakeClock } from '../../../harness/clock';
import { startTestRedis, TestRedis } from '../../../harness/redis';
import { BOARDS } from '../../../harness/worst-case/boards';

/**
 * The costliest single segmented write (issue #45: one atomic call, so its own work is what bounds it): on
 * the harness's `wc-seg` (4 windows, the first keeping snapshots, a unique view, `ties: first`, capped
 * actors) an existing item with a new actor in 8 live segments, nothing of them due. Its commands, read
 * from SLOWLOG (every command logged) by name: 826 before, 832 on a Cluster (each segment drained though
 * nothing of it was due: its 4 oldest slots read, its results counted, its due written again; a tie
 * sequence number taken per window; each segment's end read apart; the new actor's contribution read in
 * each window beside its cap's `held`, and its pairs hash asked EXISTS), 709 and 715 then (no ZRANGE,
 * ZCARD or EXISTS), 636 and 642 since: each segment's due read with the others' (one ZMSCORE, not a
 * ZSCORE each), its end read once for the limit and the growth, its snapshot mark read once (not again
 * at its first write), the segments' ends and names written in one ZADD each, and in each window the new
 * pair and its item's actor count written in one HSET (the count read with the pair), not two HINCRBY; 601 and 607
 * then: once a window found the new actor's pair absent from its pairs hash, the next windows read that hash before
 * the cap's `held`, which a pair absent there does not hold (one HGET of `held`, not 36); 569 and 575 now: a segment
 * window's slot whose hash held the item already is indexed, so it is not indexed again (no ZADD NX in 32 windows).
 * The same commands have since cost less Lua (bench/write-instructions.ts: 10.26–10.39 → 9.60–9.77 M instructions): each
 * window's keys are kept by window from call to call, and a segment's windows tell no view that reads no sums.
 */
const T0 = 1_700_006_400_000;
const SEGMENTS = Array.from({ length: 8 }, (_, k) => `s${k}`);
/** The commands that write's call runs at most (with the quotas' growth counted, as every API write is), by topology. */
const SINGLE_WRITE_COMMANDS = { single: 569, cluster: 575 };
/** id, time, µs, arguments, client address, client name. */
type SlowlogEntry = [number, number, number, string[], string, string];

/** The command names each `increment_batch` FCALL's script ran since the last SLOWLOG reset, on every node. */
async function batchCallCommands(nodes: Redis[]): Promise<string[][]> {
  const calls: string[][] = [];
  for (const node of nodes) {
    let inCall: string[] = [];
    // Oldest first: a script's commands are logged before the call that ran them.
    for (const [, , , args, client] of ((await node.slowlog('GET', 100_000)) as SlowlogEntry[]).reverse()) {
      if (client === '?:0') inCall.push(String(args[0]).toUpperCase());
      else {
        if (/_increment_batch$/.test(String(args[1]))) calls.push(inCall);
        inCall = [];
      }
    }
  }
  return calls;
}

describe.each(['single', 'cluster'] as const)('the costliest single segmented write (%s)', (topology) => {
  const clock = new FakeClock(T0);
  let redis: TestRedis;
  let app: NestFastifyApplication;
  let nodes: Redis[];
  const http = () => request(app.getHttpServer());
  const write = (items: object[]) => http().post('/boards/seg/increments').send({ items }).expect(200);

  beforeAll(async () => {
    redis = await startTestRedis(topology, { own: true });
    app = await startTestApp(redis, clock);
    const client = redis.client as Redis & { nodes?: (role: string) => Redis[] };
    nodes = topology === 'cluster' && client.nodes ? client.nodes('master') : [client];
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  async function measured(send: () => Promise<unknown>): Promise<string[][]> {
    for (const node of nodes) {
      await node.config('SET', 'slowlog-log-slower-than', '0');
      await node.config('SET', 'slowlog-max-len', '100000');
      await node.slowlog('RESET');
    }
    await send();
    const calls = await batchCallCommands(nodes);
    for (const node of nodes) await node.config('SET', 'slowlog-log-slower-than', '10000');
    return calls;
  }

  it('runs at most SINGLE_WRITE_COMMANDS commands, none draining a segment with nothing due or asking EXISTS', async () => {
    await http().put('/admin/boards/seg').set(ADMIN).send(BOARDS['wc-seg']).expect(201);
    for (let n = 0; n < 24; n++)
      await write([{ item: `i${n}`, amount: 24 - n, actor: `a${n % 5}`, segments: [SEGMENTS[n % 8]] }]);
    await write([{ item: 'i0', amount: 1, actor: 'seed', segments: SEGMENTS }]);
    clock.advanceMs(1_000);
    const calls = await measured(() => write([{ item: 'i0', amount: 1, actor: 'fresh', segments: SEGMENTS }]));
    expect(calls).toHaveLength(1);
    const [commands] = calls;
    const named = (name: string) => commands.filter((command) => command === name).length;
    expect({
      commands: Math.min(commands.length, SINGLE_WRITE_COMMANDS[topology]),
      drained: named('ZRANGE') + named('ZCARD'),
      EXISTS: named('EXISTS'),
    }).toEqual({ commands: commands.length, drained: 0, EXISTS: 0 });
    for (const segment of SEGMENTS) {
      const { body } = await http().get(`/boards/seg/top?window=m&segment=${segment}&limit=10`).expect(200);
      expect((body.items as Array<{ item: string }>).find((row) => row.item === 'i0')).toMatchObject({
        score: segment === 's0' ? 26 : 2,
      });
    }
  });
});
