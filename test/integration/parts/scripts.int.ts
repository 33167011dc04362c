import { readFileSync } from 'node:fs';
import { KEYS_LIBRARY } from '../../../src/redis/scripts';
import { startTestRedis, TestRedis } from '../../../harness/redis';

describe('keys_lib.lua on a real Redis', () => {
  let redis: TestRedis;
  const siblingOf = (key: string, suffix: string, replacement: string) =>
    redis.client.eval(
      `local keyspace = {}\n${readFileSync(KEYS_LIBRARY, 'utf8')}\nreturn keyspace.sibling_key(KEYS[1], ARGV[1], ARGV[2])`,
      1,
      key,
      suffix,
      replacement,
    );

  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(() => redis.stop());

  it('derives a sibling key by replacing the expected suffix, keeping the hash tag', async () => {
    expect(await siblingOf('{tb:board:b}:24h:slots', 'slots', 'slot:3600')).toBe('{tb:board:b}:24h:slot:3600');
    expect(await siblingOf('{tb:cnt:3}:known', 'known', 'count:5:hits')).toBe('{tb:cnt:3}:count:5:hits');
  });

  it('raises TB_KEY_SHAPE instead of deriving from a key with another suffix', async () => {
    await expect(siblingOf('{tb:board:b}:24h:top', 'slots', 'slot:1')).rejects.toThrow(
      /TB_KEY_SHAPE key "\{tb:board:b\}:24h:top" does not end with "slots"/,
    );
    await expect(siblingOf('ts', 'slots', 'x')).rejects.toThrow(/TB_KEY_SHAPE/);
  });
});
