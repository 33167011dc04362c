/**
 * `npm run demo`: a live trending board within seconds. Uses the service at DEMO_URL (default
 * http://127.0.0.1:3000), or starts one (`node dist/main.js`, built when needed) when nothing answers
 * there, then feeds a seeded, realistic stream: posts that rise and fade, likes, a few bursts, a page
 * view counter and a latency stat. It stops after DEMO_SECONDS (default 120) or on Ctrl-C, and says how
 * to clean up (`npm run demo -- --clean` deletes what it made). ADMIN_TOKEN: the service's admin token
 * (the one it starts uses DEMO_ADMIN_TOKEN's default).
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
const BASE = process.env.DEMO_URL ?? 'http://127.0.0.1:3000';
const ADMIN_TOKEN = process.env.ADMIN_TOKEN ?? 'demo-admin-token-change-me';
const SECONDS = Number(process.env.DEMO_SECONDS ?? 120);
const TICK_MS = Number(process.env.DEMO_TICK_MS ?? 250);
const BOARD = 'demo.posts';
const COUNTER = 'demo.pageviews';
const STATS = ['demo.api', 'LatencyMs'];
const POSTS = 40;

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
  if (process.env.DEMO_API_KEY) headers['x-api-key'] = process.env.DEMO_API_KEY;
  return fetch(`${BASE}${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
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
  if (!made.ok) throw new Error(`creating board ${BOARD} failed: ${made.status} ${await made.text()}`);
}

async function clean(): Promise<void> {
  const board = await call('DELETE', `/admin/boards/${BOARD}`, undefined, true);
  const counter = await call('DELETE', `/admin/counters/${COUNTER}`, undefined, true);
  console.log(`deleted board ${BOARD} (${board.status}) and counter ${COUNTER} (${counter.status})`);
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
  if (failed) throw new Error(`a write failed: ${failed.status} ${await failed.text()}`);
  return items.reduce((sum, entry) => sum + entry.amount, 0);
}

async function main(): Promise<void> {
  if (process.argv.includes('--clean')) return clean();
  const service = await ensureService();
  const stop = () => service?.kill('SIGTERM');
  await createBoard();
  const random = seeded(42);
  const ticks = Math.max(1, Math.round((SECONDS * 1000) / TICK_MS));
  const posts: Post[] = Array.from({ length: POSTS }, (_, i) => ({
    id: `post-${String(i + 1).padStart(2, '0')}`,
    startTick: Math.floor(random() * ticks * 0.7),
    peak: 1 + random() * 12,
    lifeTicks: 20 + Math.floor(random() * ticks * 0.5),
  }));
  // The first posts start at once, so the board moves within the first second.
  for (const post of posts.slice(0, 8)) post.startTick = 0;
  console.log(`feeding ${BOARD} for ${SECONDS} s: open ${BASE}/dashboard?board=${BOARD} (Ctrl-C stops)`);
  let stopped = false;
  process.once('SIGINT', () => (stopped = true));
  let events = 0;
  for (let tickNo = 0; tickNo < ticks && !stopped; tickNo++) {
    events += await tick(posts, tickNo, random);
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  console.log(`done: ${events} increments sent. Clean up with: npm run demo -- --clean`);
  stop();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
