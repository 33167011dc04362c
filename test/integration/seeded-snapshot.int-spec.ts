/**
 * WORST_CASE_SEEDED's save and reload (harness/worst-case/seeded-snapshot.ts): a private redis-server
 * SAVEs a prefix's keys into the directory, a second server started on it answers them under the same
 * prefix, the fake clock's time comes back from seeded.json, and the second server's writes leave the
 * saved file as it was. A saved file without its seeded.json is refused, not seeded on.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { startTestRedis } from '../../harness/redis';
import {
  checkLoaded,
  checkSeeded,
  readSeeded,
  saveSeeded,
  seededServerArgs,
} from '../../harness/worst-case/seeded-snapshot';

const HOUR_MS = 3_600_000;
const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('a seeded Redis kept on disk (WORST_CASE_SEEDED)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tb-seeded-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reloads the saved keys under the saved prefix, with the clock and state, and never rewrites the file', async () => {
    expect(readSeeded(dir)).toBeUndefined();
    const first = await startTestRedis('single', { serverArgs: seededServerArgs(dir) });
    const client = first.client as Redis;
    await client.set(`{${first.prefix}board:b}:cfg`, 'seeded');
    await client.sadd(`${first.prefix}boards:names`, 'b');
    await client.set(`${first.prefix}short`, 'x', 'PX', 2 * HOUR_MS);
    await client.set(`{${first.prefix}stats:c:t}:cur`, 'renewed by its row', 'PX', 60_000);
    const meta = { prefix: first.prefix, nowMs: 1_796_803_200_000, scale: 'ci' as const, state: { at: '7' } };
    await saveSeeded(client, dir, meta);
    await first.stop();
    const rdb = digest(join(dir, 'seeded.rdb'));

    const saved = readSeeded(dir)!;
    expect(saved).toMatchObject(meta);
    // The stats pair's hash is left out: its row records it again.
    expect(saved.shortestTtlMs).toBeGreaterThan(HOUR_MS);
    const second = await startTestRedis('single', { serverArgs: seededServerArgs(dir), prefix: saved.prefix });
    try {
      expect(second.prefix).toBe(first.prefix);
      await checkLoaded(second.client as Redis, dir, saved.prefix);
      expect(await second.client.get(`{${saved.prefix}board:b}:cfg`)).toBe('seeded');
      await second.client.set(`{${saved.prefix}board:b}:cfg`, 'a row wrote');
    } finally {
      await second.stop();
    }
    expect(digest(join(dir, 'seeded.rdb'))).toBe(rdb);
  });

  it('refuses a saved file without its seeded.json rather than seed on its keys', () => {
    writeFileSync(join(dir, 'seeded.rdb'), 'REDIS0011');
    expect(() => readSeeded(dir)).toThrow(/holds seeded\.rdb without seeded\.json.*remove seeded\.rdb/);
    rmSync(join(dir, 'seeded.rdb'));
    expect(readSeeded(dir)).toBeUndefined();
  });

  it('refuses a server that did not load the saved file', async () => {
    const other = await startTestRedis('single', { own: true });
    try {
      await expect(checkLoaded(other.client as Redis, dir, other.prefix)).rejects.toThrow(/holds no seeded boards/);
    } finally {
      await other.stop();
    }
  });

  it('refuses a snapshot of another scale, or one older than its shortest-lived key', () => {
    const savedAt = Date.parse('2026-12-06T08:00:00Z');
    const meta = {
      prefix: 'p:',
      nowMs: 0,
      scale: 'ci' as const,
      state: {},
      commit: '',
      savedAt: '2026-12-06T08:00:00Z',
    };
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    expect(() => checkSeeded({ ...meta, shortestTtlMs: HOUR_MS }, 'full', savedAt)).toThrow(/ci seeding, not full/);
    expect(() => checkSeeded({ ...meta, shortestTtlMs: HOUR_MS }, 'ci', savedAt + HOUR_MS)).toThrow(/seed again/);
    expect(() => checkSeeded({ ...meta, shortestTtlMs: HOUR_MS }, 'ci', savedAt + HOUR_MS - 1)).not.toThrow();
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/seeded at commit/));
    log.mockRestore();
  });
});
