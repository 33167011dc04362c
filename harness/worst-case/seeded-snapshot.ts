/**
 * A seeded Redis kept on disk (WORST_CASE_SEEDED=<dir>, bench/abuse/worst-case.ts): the first run seeds
 * as always, then SAVEs the private redis-server's data into <dir>/seeded.rdb and writes
 * <dir>/seeded.json (what else the rows need: the key prefix, the fake clock); a later run starts its
 * redis-server on that file and skips seeding. One node only: a Cluster's nodes would each need theirs.
 * The file is only ever written by SAVE: the server starts with `--save ''` (no save points) and is
 * killed at the end (harness/processes.ts stopChild), so the rows' writes never reach it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Redis } from 'ioredis';
import { BoardCache } from '../../src/ranking/boards/board-cache';
import { BOARDS, type BoardName, PAST_WRITE_BOUND, type Scale } from './boards';

const RDB = 'seeded.rdb';
const META = 'seeded.json';

/** What a run on the saved data needs besides Redis' keys. */
export interface SeededMeta {
  prefix: string;
  /** The fake clock's time once seeding ended. */
  nowMs: number;
  scale: Scale;
  /** `git rev-parse HEAD` when seeded. */
  commit: string;
  /** Wall time of the SAVE (ISO 8601). */
  savedAt: string;
  /** The harness context's `state` once seeding ended. */
  state: Record<string, string>;
  /** The shortest time to live (ms, Redis' real clock) of a saved key of the prefix; null when none has one. */
  shortestTtlMs: number | null;
}

/** The redis-server arguments that load <dir>/seeded.rdb at start and make SAVE write it. */
export const seededServerArgs = (dir: string): string[] => ['--dir', dir, '--dbfilename', RDB];

export function headCommit(): string {
  return execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
}

/**
 * The snapshot in `dir`, or undefined when it holds none yet (then the directory is made, to be saved into).
 * Refuses a seeded.rdb without its seeded.json (a run stopped between its SAVE and the file, or a file put
 * there by hand): the fresh seeding's redis-server would start on that file's keys, under another prefix
 * and clock.
 */
export function readSeeded(dir: string): SeededMeta | undefined {
  const [hasMeta, hasRdb] = [existsSync(join(dir, META)), existsSync(join(dir, RDB))];
  if (hasRdb && !hasMeta)
    throw new Error(
      `WORST_CASE_SEEDED=${dir} holds ${RDB} without ${META}: a seeding would start on its keys; remove ${RDB} (or empty the directory) to seed again`,
    );
  if (!hasMeta || !hasRdb) {
    mkdirSync(dir, { recursive: true });
    return undefined;
  }
  return JSON.parse(readFileSync(join(dir, META), 'utf8')) as SeededMeta;
}

/**
 * Refuses a snapshot of another scale, or one whose shortest-lived key has expired on Redis' real clock
 * since its SAVE (the rows would meet less than was seeded); tells when it was seeded at another commit.
 */
export function checkSeeded(meta: SeededMeta, scale: Scale, nowMs = Date.now()): void {
  if (meta.scale !== scale) throw new Error(`WORST_CASE_SEEDED holds a ${meta.scale} seeding, not ${scale}`);
  const age = nowMs - Date.parse(meta.savedAt);
  if (meta.shortestTtlMs !== null && age >= meta.shortestTtlMs)
    throw new Error(
      `WORST_CASE_SEEDED was saved ${Math.round(age / 60_000)} min ago: its keys expire from ${Math.round(meta.shortestTtlMs / 60_000)} min after the save; seed again (empty the directory)`,
    );
  const head = headCommit();
  if (meta.commit !== head) console.log(`WORST_CASE_SEEDED: seeded at commit ${meta.commit}, HEAD is ${head}`);
}

/**
 * Keys whose expiry on Redis' real clock the rows make up for themselves: wc-cross' segment marks (3
 * minutes; its row writes them again) and the stats pairs' hashes (about an hour; the stats read row
 * records its pair first). Their expiry does not bound a snapshot's life.
 */
const RENEWED_BY_ROWS = ['board:wc-cross}', 'stats:'];

/** The shortest PTTL of the prefix's keys on `client` but RENEWED_BY_ROWS' (null when no other key has one). */
async function shortestTtl(client: Redis, prefix: string): Promise<number | null> {
  const renewed = (key: string) => RENEWED_BY_ROWS.some((start) => key.replace(/^\{/, '').startsWith(prefix + start));
  let shortest: number | null = null;
  // A SCAN step at a time: a full-size seeding holds millions of keys.
  for (const match of [`${prefix}*`, `{${prefix}*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      cursor = next;
      const pipeline = client.pipeline();
      for (const key of keys.filter((found) => !renewed(found))) pipeline.pttl(key);
      for (const [, ttl] of (await pipeline.exec()) ?? [])
        if (typeof ttl === 'number' && ttl >= 0 && (shortest === null || ttl < shortest)) shortest = ttl;
    } while (cursor !== '0');
  }
  return shortest;
}

/** SAVEs the seeded data into the server's <dir>/seeded.rdb, then writes <dir>/seeded.json. */
export async function saveSeeded(
  client: Redis,
  dir: string,
  meta: Omit<SeededMeta, 'commit' | 'savedAt' | 'shortestTtlMs'>,
): Promise<SeededMeta> {
  const shortestTtlMs = await shortestTtl(client, meta.prefix);
  await client.save();
  const saved = { ...meta, commit: headCommit(), savedAt: new Date().toISOString(), shortestTtlMs };
  writeFileSync(join(dir, META), `${JSON.stringify(saved, null, 2)}\n`);
  return saved;
}

/**
 * Refuses a server without the saved boards (its RDB file not loaded, or another server reached on the
 * port: harness/processes.ts freePort can race another process starting one).
 */
export async function checkLoaded(client: Redis, dir: string, prefix: string): Promise<void> {
  const [, loadedDir] = (await client.config('GET', 'dir')) as [string, string];
  if (loadedDir !== resolve(dir) || !(await client.exists(`${prefix}boards:names`)))
    throw new Error(`the redis-server on WORST_CASE_SEEDED=${dir} holds no seeded boards (its dir: ${loadedDir})`);
}

/**
 * Each app's board cache as seeding leaves it: the measured app cached every board its admin declared
 * (not those past its write bound, which the operator declares on the seeder), the seeder every board
 * it wrote. A reused seeding's first read of a board would otherwise add a config read to its row.
 */
export async function warmBoardCaches(apps: { measured: NestFastifyApplication; seeder: NestFastifyApplication }) {
  for (const name of Object.keys(BOARDS)) {
    await apps.seeder.get(BoardCache).get(name);
    if (!PAST_WRITE_BOUND.includes(name as BoardName)) await apps.measured.get(BoardCache).get(name);
  }
}
