/**
 * The worst-case meter's SLOWLOG reader (harness/worst-case/slowlog-reader.ts) reads raw RESP: each entry
 * it answers must be the one ioredis decodes, over a reply of many socket chunks, a script's commands,
 * arguments past SLOWLOG's 32 and a name of several bytes a character.
 */
import type Redis from 'ioredis';
import { startTestRedis, type TestRedis } from '../../harness/redis';
import { SlowlogReader } from '../../harness/worst-case/slowlog-reader';

type RawEntry = [number, number, number, Buffer[], Buffer, Buffer];
const ENTRIES = 20_000;

describe('the worst-case SLOWLOG reader', () => {
  let redis: TestRedis;
  let node: Redis;

  beforeAll(async () => {
    redis = await startTestRedis('single', { own: true });
    node = redis.client as Redis;
    await node.config('SET', 'slowlog-log-slower-than', '0');
    await node.config('SET', 'slowlog-max-len', String(ENTRIES));
    await node.slowlog('RESET');
    const script = "for i = 1, tonumber(ARGV[1]) do redis.call('zadd', KEYS[1], i, 'm' .. i) end return 1";
    await node.eval(script, 1, 'slowlog:z', String(ENTRIES / 2));
    await node.sadd('slowlog:s', ...Array.from({ length: 40 }, (_, n) => `member-${n}`));
    await node.set('slowlog:ключ', 'значение');
    await node.call('FCALL_RO', 'nope', '0').catch(() => undefined);
  });

  afterAll(() => redis.stop());

  it('answers the entries ioredis decodes, in the same order', async () => {
    const reader = new SlowlogReader(node);
    try {
      const raw = (await node.callBuffer('SLOWLOG', 'GET', String(ENTRIES))) as RawEntry[];
      const read = await reader.get(ENTRIES);
      const decoded = new Map(
        raw.map(([id, , micros, args, client]) => [
          id,
          {
            ...{ id, micros, command: args[0].toString().toLowerCase(), first: args[1]?.toString() },
            script: client.toString() === '?:0',
          },
        ]),
      );
      // Beside them, the newest: ioredis's own SLOWLOG GET, logged once it ran.
      const both = read.filter((entry) => decoded.has(entry.id));
      expect(both.length).toBe(read.length - 1);
      expect(both.length).toBeGreaterThan(ENTRIES / 2);
      expect(both).toEqual(both.map((entry) => decoded.get(entry.id)));
      expect(read.filter((entry) => entry.script).length).toBeGreaterThan(0);
      expect(read.map((entry) => entry.first)).toContain('slowlog:ключ');
    } finally {
      reader.close();
    }
  });

  it("leaves a script's commands' keys out unless asked for them, every other field as read with them", async () => {
    const reader = new SlowlogReader(node);
    try {
      const withKeys = await reader.get(ENTRIES);
      const withoutKeys = new Map((await reader.get(ENTRIES, false)).map((entry) => [entry.id, entry]));
      const both = withKeys.filter((entry) => withoutKeys.has(entry.id));
      expect(both.filter((entry) => entry.script).length).toBeGreaterThan(ENTRIES / 4);
      expect(both.map((entry) => withoutKeys.get(entry.id))).toEqual(
        both.map((entry) => ({ ...entry, first: entry.script ? undefined : entry.first })),
      );
      expect([...withoutKeys.values()].map((entry) => entry.first)).toContain('slowlog:ключ');
    } finally {
      reader.close();
    }
  });
});
