/**
 * Actors (issue #26; `npm run bench -- --part actors`, about a minute), on one private
 * redis-server:
 * 1. Memory per contribution: BENCH_ACTORS_EVENTS events of distinct (actor, item) pairs on a board of
 *    two windows (1 h in 5 m slots, 24 h in 1 h slots), with an actor against the same events without
 *    one (INFO used_memory): what one (actor, item, slot) costs in one window; and a HyperLogLog per
 *    item holding the same actors, for comparison with an estimate.
 * 2. A retraction: one actor with 10 000 events over 1 000 items in the last hour, on a board of three
 *    windows (1 h/1 m, 1 d/1 h, 7 d/1 d) and two views (unique on 1 h, decay on 1 d) that also holds
 *    20 000 events of 2 000 other actors; wall time of POST to done (RetractionService in this process,
 *    steps in sequence), its Redis calls timed by Redis (SLOWLOG at 0 µs), and a check that every
 *    window then lists what the other actors sent. Baseline in the same run: the same 10 000 events
 *    taken out by a client replaying them as negative increments (batches of 1 000), on a twin board.
 */
import Redis from 'ioredis';
import { RankingGraph } from '../harness/compose-ranking';
import { BatchInput } from '../src/ranking/writes/write-commands';
import { FakeClock } from '../harness/clock';
import { cpuSeconds } from './process-stats';
import { ACTOR_BOARD_VIEWS as VIEWS, ACTOR_BOARD_WINDOWS as WINDOWS, benchOnPrivateRanking } from './private-ranking';

const EVENTS = Number(process.env.BENCH_ACTORS_EVENTS ?? 20_000);
const SPAM_EVENTS = 10_000;
const NOW_MS = Date.parse('2026-11-25T12:00:00Z');

async function usedMemory(redis: Redis): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 200));
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
}

async function send(graph: RankingGraph, board: string, entries: BatchInput[]): Promise<void> {
  for (let i = 0; i < entries.length; i += 1000) await graph.ranking.incrementBatch(board, entries.slice(i, i + 1000));
}

/** Bytes per event of EVENTS distinct (actor, item) pairs, with and without the actor, and per item of an HLL. */
async function memory(graph: RankingGraph, redis: Redis): Promise<string[]> {
  const windows = WINDOWS.slice(0, 2).map((w, i) => ({ ...w, interval: i === 0 ? '5m' : '1h' }));
  await graph.ranking.putBoard({ name: 'plain', windows });
  await graph.ranking.putBoard({ name: 'acted', windows, shards: 1, views: [], actors: true });
  const events = Array.from({ length: EVENTS }, (_, n) => ({ item: `i${n % 1000}`, amount: 1, actor: `a${n}` }));
  let before = await usedMemory(redis);
  await send(
    graph,
    'plain',
    events.map(({ item, amount }) => ({ item, amount })),
  );
  const plain = ((await usedMemory(redis)) - before) / EVENTS;
  before = await usedMemory(redis);
  await send(graph, 'acted', events);
  const acted = ((await usedMemory(redis)) - before) / EVENTS;
  before = await usedMemory(redis);
  for (let item = 0; item < 1000; item++)
    await redis.pfadd(`hll:${item}`, ...events.filter((_, n) => n % 1000 === item).map((e) => e.actor));
  const hll = ((await usedMemory(redis)) - before) / 1000;
  return [
    `${EVENTS} events, ${EVENTS / 1000} distinct actors per item, 2 windows`,
    `| board | bytes per event | per (actor, item, slot) in one window |`,
    `| --- | ---: | ---: |`,
    `| without actors | ${plain.toFixed(0)} | |`,
    `| with actors | ${acted.toFixed(0)} | ${((acted - plain) / 2).toFixed(0)} |`,
    `HyperLogLog of the same actors: ${hll.toFixed(0)} bytes per item (${(hll / (EVENTS / 1000)).toFixed(0)} per actor; standard error 0.81 %)`,
  ];
}

/** Redis's own timing of each call since the last reset: [µs, command]. */
async function slowlog(redis: Redis): Promise<Array<[number, string]>> {
  const entries = (await redis.call('SLOWLOG', 'GET', '-1')) as Array<[number, number, number, string[]]>;
  return entries.map((entry) => [entry[2], `${entry[3][0]} ${entry[3][1] ?? ''}`]);
}

/**
 * An hour of events on boards r and twin: the others' events and the spam actor's, minute by minute.
 * Returns the others' sum per item (what r lists once the spam is retracted) and the spam events.
 */
async function seedRetraction(graph: RankingGraph, clock: FakeClock) {
  const expected = new Map<string, number>();
  for (const board of ['r', 'twin']) {
    await graph.ranking.putBoard({ name: board, windows: WINDOWS, shards: 1, views: VIEWS, actors: true });
  }
  const spam: BatchInput[] = [];
  for (let minute = 0; minute < 60; minute++) {
    clock.setMs(NOW_MS - (59 - minute) * 60_000);
    const others = Array.from({ length: 20_000 / 60 }, (_, k) => ({
      item: `i${(minute * 333 + k) % 5000}`,
      amount: 1 + (k % 3),
      actor: `u${(minute * 333 + k) % 2000}`,
    }));
    const mine = Array.from({ length: Math.ceil(SPAM_EVENTS / 60) }, (_, k) => ({
      item: `i${(minute * 17 + k) % 1000}`,
      amount: 1,
      actor: 'spam',
    })).slice(0, SPAM_EVENTS - spam.length);
    spam.push(...mine);
    for (const board of ['r', 'twin']) await send(graph, board, [...others, ...mine]);
    for (const e of others) expected.set(e.item, (expected.get(e.item) ?? 0) + e.amount);
  }
  return { expected, spam };
}

async function retraction(graph: RankingGraph, redis: Redis, clock: FakeClock, pid?: number): Promise<string[]> {
  const { expected, spam } = await seedRetraction(graph, clock);
  await redis.call('CONFIG', 'SET', 'slowlog-log-slower-than', '0', 'slowlog-max-len', '100000');
  await redis.call('SLOWLOG', 'RESET');
  let started = process.hrtime.bigint();
  const cpuBefore = cpuSeconds(pid);
  const { id } = (await graph.retractions.start('r', { kind: 'actor', id: 'spam' })).body;
  await graph.retractions.settled('r', id);
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuMs = (cpuSeconds(pid) - cpuBefore) * 1000;
  const done = await graph.retractions.get('r', id);
  const steps = (await slowlog(redis)).filter(([, command]) => command.includes('_retract_step'));
  const sorted = steps.map(([usec]) => usec / 1000).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2);
  const slow = sorted.filter((ms) => ms > 5).length;
  const total = steps.reduce((sum, [usec]) => sum + usec, 0) / 1000;
  started = process.hrtime.bigint();
  await send(
    graph,
    'twin',
    spam.map((e) => ({ item: e.item, amount: -e.amount! })),
  );
  const replayMs = Number(process.hrtime.bigint() - started) / 1e6;
  const exact = await listsExactly(graph, expected);
  return [
    `| retraction | events, amount | steps | step median / p95 / max (Redis) | steps > 5 ms | all steps (Redis) | Redis CPU per step | wall, POST to done | lists exactly the others' events |`,
    `| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |`,
    `| 10 000 events, 3 windows, 2 views | ${done.events}, ${done.amount} | ${steps.length} | ${at(0.5)} / ${at(0.95)} / ${at(1)} ms | ${slow} | ${total.toFixed(0)} ms | ${(cpuMs / steps.length).toFixed(2)} ms | ${wallMs.toFixed(0)} ms | ${exact} |`,
    `Baseline, same run: a client replaying the 10 000 events as negative increments: ${replayMs.toFixed(0)} ms`,
  ];
}

async function listsExactly(graph: RankingGraph, expected: Map<string, number>): Promise<string> {
  for (const window of ['hour', 'day', 'week']) {
    const rows = new Map<string, number>();
    for (let offset = 0; ; offset += 1000) {
      const page = await graph.ranking.top('r', window, offset, 1000);
      for (const row of page.items) rows.set(row.item, row.score);
      if (page.items.length < 1000) break;
    }
    const same = rows.size === expected.size && [...expected].every(([item, score]) => rows.get(item) === score);
    if (!same) return `no (${window})`;
  }
  return 'yes';
}

export const actorsBench = (): Promise<void> =>
  benchOnPrivateRanking(NOW_MS, async ({ graph, clock, server }) => {
    const redis = new Redis(server.url);
    try {
      return [...(await memory(graph, redis)), '', ...(await retraction(graph, redis, clock, server.child.pid))];
    } finally {
      redis.disconnect();
    }
  });
