/**
 * `npm run demo`: a live trending board within seconds. Uses the service at DEMO_URL (default
 * http://127.0.0.1:3000), or starts one (`node dist/main.js`, built when needed) when nothing answers
 * there, then feeds a seeded, realistic stream: posts that rise and fade, likes, a few bursts, a page
 * view counter and a latency stat. It says how it is doing every DEMO_PROGRESS_MS (default 10 s), stops
 * after DEMO_SECONDS (default 120) or on Ctrl-C, and says how to clean up (`npm run demo -- --clean` deletes what it made,
 * and fails saying why when the service refuses).
 *
 * The README's names: ADMIN_TOKEN (default the Quick start's, change-me-to-a-long-secret) and, on a
 * keyed service, API_KEY (a read+write key). A `.env` file of the working directory is read as
 * `npm start` reads it, under the environment.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

if (existsSync('.env')) process.loadEnvFile('.env');
const ROOT = join(__dirname, '..');
const BASE = process.env.DEMO_URL ?? 'http://127.0.0.1:3000';
const ADMIN_TOKEN = process.env.ADMIN_TOKEN || 'change-me-to-a-long-secret';
const API_KEY = process.env.API_KEY || undefined;
const SECONDS = Number(process.env.DEMO_SECONDS ?? 120);
const TICK_MS = Number(process.env.DEMO_TICK_MS ?? 250);
const PROGRESS_EVERY_MS = Number(process.env.DEMO_PROGRESS_MS ?? 10_000);
const BOARD = 'demo.posts';
const COUNTER = 'demo.pageviews';
const STATS = ['demo.api', 'LatencyMs'];
const POSTS = 40;
const CLEAN_HINT = 'npm run demo -- --clean';

/** A small seeded generator (mulberry32): the same run every time. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A post's popularity over the run: rises from its start tick, peaks, then fades. */
interface Post {
  id: string;
  startTick: number;
  peak: number;
  lifeTicks: number;
}

function popularity(post: Post, tick: number): number {
  const age = tick - post.startTick;
  if (age < 0 || age > post.lifeTicks) return 0;
  return post.peak * Math.sin((Math.PI * age) / post.lifeTicks);
}

async function call(method: string, path: string, body?: object, admin = false): Promise<Response> {
  const headers: Record<string, string> = {};
  if (body) headers['content-type'] = 'application/json';
  if (admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
  if (API_KEY) headers['x-api-key'] = API_KEY;
  return fetch(`${BASE}${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
}

/** What to do about a refusal, in the README's names; the status and body for anything else. */
async function refusal(what: string, response: Response): Promise<Error> {
  const text = await response.text();
  const code = /"code":"([A-Z_]+)"/.exec(text)?.[1];
  const why: Record<string, string> = {
    ADMIN_TOKEN_INVALID: `ADMIN_TOKEN is not the token the service at ${BASE} runs with: export ADMIN_TOKEN=<that token> (the Quick start's is change-me-to-a-long-secret)`,
    ADMIN_TOKEN_MISSING: `the service at ${BASE} wants ADMIN_TOKEN: export ADMIN_TOKEN=<the token it runs with>`,
    ADMIN_DISABLED: `the service at ${BASE} runs without ADMIN_TOKEN: restart it with ADMIN_TOKEN=<16 characters or more>, and export the same here`,
    API_KEY_MISSING: `the service at ${BASE} is keyed: export API_KEY=<a read+write key> (a bare secret in API_KEYS is one)`,
    API_KEY_INVALID: `the service at ${BASE} does not know API_KEY: export API_KEY=<a read+write key it knows>`,
    API_KEY_SCOPE: `API_KEY lacks a scope the demo needs: give it read+write (and admin for --clean, or export ADMIN_TOKEN)`,
  };
  const status = code === undefined ? `${response.status}` : `${response.status} ${code}`;
  return new Error(`${what} refused (${status}): ${code !== undefined && why[code] ? why[code] : text}`);
}

async function answers(): Promise<boolean> {
  return fetch(`${BASE}/health/live`).then(
    (response) => response.ok,
    () => false,
  );
}

/** Starts the built service on DEMO_URL's port when nothing answers there. */
async function ensureService(): Promise<ChildProcess | undefined> {
  if (await answers()) return undefined;
  const port = new URL(BASE).port || '3000';
  console.log(`no service at ${BASE}: building if needed and starting one (node dist/main.js, PORT=${port})`);
  spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-if-changed.mjs')], { stdio: 'inherit' });
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'main.js')], {
    env: { ...process.env, PORT: port, ADMIN_TOKEN, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (let tries = 0; tries < 100 && !(await answers()); tries++) await new Promise((r) => setTimeout(r, 200));
  if (!(await answers())) throw new Error(`the service did not answer at ${BASE}`);
  return child;
}

async function createBoard(): Promise<void> {
  const made = await call(
    'PUT',
    `/admin/boards/${BOARD}`,
    {
      windows: [
        { name: 'hour', period: '1h', interval: '1m', snapshots: { keep: 60, top: 20 } },
        { name: 'day', period: '24h', interval: '1h' },
      ],
      views: [
        { name: 'fading', mode: 'decay', window: 'hour', halfLife: '10m' },
        { name: 'hot', mode: 'hot', window: 'day' },
        { name: 'rising', mode: 'rising', window: 'hour', baseline: 'day', minCount: 3 },
      ],
    },
    true,
  );
  if (!made.ok) throw await refusal(`creating board ${BOARD}`, made);
}

/** Deletes the demo's board and counter: gone already is fine, a refusal fails the run saying why. */
async function clean(): Promise<void> {
  for (const [what, path] of [
    [`board ${BOARD}`, `/admin/boards/${BOARD}`],
    [`counter ${COUNTER}`, `/admin/counters/${COUNTER}`],
  ]) {
    const deleted = await call('DELETE', path, undefined, true);
    if (deleted.status === 404) console.log(`${what}: not there (deleted already, or never made)`);
    else if (deleted.ok) console.log(`${what}: deleted`);
    else throw await refusal(`deleting ${what}`, deleted);
  }
}

/** One tick of traffic: each post's increments follow its curve, with likes, bursts and page views. */
async function tick(posts: Post[], tickNo: number, random: () => number): Promise<number> {
  const items = posts
    .map((post) => ({ item: post.id, amount: Math.round(popularity(post, tickNo) * (0.5 + random())) }))
    .filter((entry) => entry.amount > 0);
  if (tickNo % 40 === 17) {
    const burst = posts[Math.floor(random() * posts.length)];
    items.push({ item: burst.id, amount: 30 + Math.round(random() * 30) });
  }
  const writes: Array<Promise<Response>> = [];
  if (items.length > 0) writes.push(call('POST', `/boards/${BOARD}/increments`, { items }));
  for (let like = 0; like < 3; like++) {
    const post = posts[Math.floor(random() * posts.length)];
    writes.push(
      call('POST', `/boards/${BOARD}/items/${post.id}/likes`, { userId: `user-${Math.floor(random() * 500)}` }),
    );
  }
  writes.push(call('POST', `/counters/${COUNTER}/increment`, { count: items.length + 1 }));
  writes.push(call('POST', `/stats/${STATS[0]}/${STATS[1]}`, { value: Math.round(20 + random() * 80) }));
  const done = await Promise.all(writes);
  const failed = done.find((response) => !response.ok && response.status !== 429);
  if (failed) throw await refusal(`a write (${failed.url.slice(BASE.length)})`, failed);
  return items.reduce((sum, entry) => sum + entry.amount, 0);
}

function makePosts(random: () => number, ticks: number): Post[] {
  const posts: Post[] = Array.from({ length: POSTS }, (_, i) => ({
    id: `post-${String(i + 1).padStart(2, '0')}`,
    startTick: Math.floor(random() * ticks * 0.7),
    peak: 1 + random() * 12,
    lifeTicks: 20 + Math.floor(random() * ticks * 0.5),
  }));
  // The first posts start at once, so the board moves within the first second.
  for (const post of posts.slice(0, 8)) post.startTick = 0;
  return posts;
}

/** One progress line: time, increments so far, and the board's leader over the last hour. */
async function progress(elapsedMs: number, events: number): Promise<void> {
  const top = await call('GET', `/boards/${BOARD}/top?window=hour&limit=1`);
  const leader = top.ok
    ? ((await top.json()) as { items: Array<{ item: string; score: number }> }).items[0]
    : undefined;
  const leading = leader ? `, leading: ${leader.item} (${leader.score} in the last hour)` : '';
  console.log(`${Math.round(elapsedMs / 1000)} of ${SECONDS} s: ${events} increments sent${leading}`);
}

async function feed(): Promise<number> {
  const random = seeded(42);
  const ticks = Math.max(1, Math.round((SECONDS * 1000) / TICK_MS));
  const posts = makePosts(random, ticks);
  console.log(`feeding ${BOARD} for ${SECONDS} s: open ${BASE}/dashboard?board=${BOARD}`);
  console.log(`Ctrl-C stops it early; ${CLEAN_HINT} then deletes the board and counter it made`);
  let stopped = false;
  process.once('SIGINT', () => (stopped = true));
  const startedAt = Date.now();
  let reportedAt = startedAt;
  let events = 0;
  for (let tickNo = 0; tickNo < ticks && !stopped; tickNo++) {
    events += await tick(posts, tickNo, random);
    if (Date.now() - reportedAt >= PROGRESS_EVERY_MS) {
      reportedAt = Date.now();
      await progress(reportedAt - startedAt, events);
    }
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  return events;
}

async function main(): Promise<void> {
  const service = await ensureService();
  try {
    if (process.argv.includes('--clean')) return await clean();
    await createBoard();
    const events = await feed();
    console.log(`done: ${events} increments sent. The board stays; clean up with: ${CLEAN_HINT}`);
  } finally {
    if (service) console.log('stopping the service the demo started');
    service?.kill('SIGTERM');
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
