/**
 * What each competition option of issue #48 adds to a write and to its natural read
 * (`npm run bench -- --part competition`, under a minute): on a private
 * redis-server, the ranking graph as the service composes it (harness/compose-ranking.ts) at one fixed
 * time, boards of COMPETITION_BENCH_ITEMS items (default 10 000) each: plain sum and max boards (a day
 * in hours), a min board of `order: asc`, a rolling and an all-time window each with maxItems, a max
 * board with a tiebreak, a calendar-day board without and with leagues (cohorts of 30), and a member
 * board of a group board (100 groups, top 10). Each call (an increment of an existing item or a score,
 * a top-10, GET …/rank, GET …/distribution, a league read, a group board's top-10) runs
 * COMPETITION_BENCH_CALLS times (default 200) one after another, in 3 interleaved rounds after a
 * warm-up call, between CONFIG RESETSTATs: per call the function calls sent, the Redis commands they
 * ran (the same whatever the load) and their µs inside Redis (INFO commandstats: wall time, which a
 * loaded machine inflates), each against the plain board's same call. COMPETITION_BENCH_INSTRUCTIONS=1:
 * the redis-server under callgrind (bench/callgrind-ranking.ts), instructions Redis executed per call in
 * place of the µs, the same at any load (about 5 minutes at 50 calls).
 */
import { rmSync } from 'node:fs';
import Redis from 'ioredis';
import { composeRanking, type RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { stopChild } from '../harness/processes';
import { validateConfig } from '../src/common/config';
import { LeaguesService } from '../src/ranking/leagues/leagues.service';
import type { BatchInput } from '../src/ranking/writes/write-commands';
import { RedisFunctions } from '../src/redis/redis-functions';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';
import { loadAverage, median } from './call-rounds';
import { withCallgrindRanking } from './callgrind-ranking';
import { COLLECT_LIBRARY } from './functions-instructions';
import { startRedisServer } from './process-stats';
import { type Callgrind, dumpCounts } from './redis-instructions';

const ITEMS = Number(process.env.COMPETITION_BENCH_ITEMS ?? 10_000);
const CALLS = Number(process.env.COMPETITION_BENCH_CALLS ?? 200);
const ROUNDS = 3;
const INSTRUCTIONS = process.env.COMPETITION_BENCH_INSTRUCTIONS === '1';
const GROUPS = 100;
const NOON_MS = Date.parse('2026-11-21T12:00:00Z');
const ROLLING = [{ name: 'day', period: 86_400, interval: 3600 }];
const CALENDAR = [{ name: 'day', calendar: 'day' as const }];
const TIERS = ['t1', 't2', 't3', 't4', 't5'];

/** One call measured: `base` names the plain board's same call (its `id`) it is set against. */
interface Case {
  option: string;
  call: string;
  id?: string;
  base?: string;
  run: (n: number) => Promise<unknown>;
}

interface Figures {
  fcalls: number[];
  commands: number[];
  usec: number[];
  instructions: number[];
}

/** The item of the nth call: every item exists (seeded), spread over the board. */
const itemOf = (n: number) => `i${(n * 7919) % ITEMS}`;
const amountOf = (i: number) => 1 + ((i * 7919) % 1000);

async function seed(graph: RankingGraph, board: string, entry: (i: number) => BatchInput): Promise<void> {
  for (let first = 0; first < ITEMS; first += 1000) {
    const entries = Array.from({ length: Math.min(1000, ITEMS - first) }, (_, k) => entry(first + k));
    await graph.ranking.incrementBatch(board, entries);
  }
}

/** Every board, seeded; the group board's members placed in GROUPS groups. */
async function boards(graph: RankingGraph): Promise<void> {
  const { ranking } = graph;
  const leagues = { window: 'day', size: 30, tiers: TIERS, promote: 3, relegate: 3 };
  await ranking.putBoard({ name: 'plain', windows: ROLLING });
  await ranking.putBoard({ name: 'asc', windows: ROLLING, aggregate: 'min', order: 'asc' });
  // An all-time window needs a cap (maxItems): its base is a rolling board of the same cap.
  await ranking.putBoard({ name: 'capped', windows: ROLLING, maxItems: 2 * ITEMS });
  await ranking.putBoard({ name: 'ever', windows: [{ name: 'ever', allTime: true }], maxItems: 2 * ITEMS });
  await ranking.putBoard({ name: 'max', windows: ROLLING, aggregate: 'max' });
  await ranking.putBoard({ name: 'tiebreak', windows: ROLLING, aggregate: 'max', tiebreak: { order: 'asc' } });
  await ranking.putBoard({ name: 'calendar', windows: CALENDAR });
  await ranking.putBoard({ name: 'league', windows: CALENDAR, leagues });
  await ranking.putBoard({ name: 'members', windows: ROLLING });
  await ranking.putBoard({ name: 'teams', groupOf: { board: 'members', window: 'day', top: 10, decay: 1 } });
  for (const board of ['plain', 'capped', 'ever', 'calendar', 'league', 'members'])
    await seed(graph, board, (i) => ({ item: `i${i}`, amount: amountOf(i) }));
  for (const board of ['max', 'asc', 'tiebreak'])
    await seed(graph, board, (i) => ({
      item: `i${i}`,
      score: amountOf(i),
      tiebreak: board === 'tiebreak' ? i % 7 : undefined,
    }));
  for (let i = 0; i < ITEMS; i++)
    await graph.groupBoards.setMember({ name: 'teams', group: `g${i % GROUPS}`, item: `i${i}` });
}

/** The calls the graph makes on a board: an increment or a score of an existing item, its reads. */
function callsOf(graph: RankingGraph) {
  const { ranking } = graph;
  return {
    increment: (board: string) => (n: number) => ranking.increment(board, itemOf(n), 1),
    score: (board: string) => (n: number) => {
      const tiebreak = board === 'tiebreak' ? n % 7 : undefined;
      return ranking.score(board, itemOf(n), amountOf(n * 31), undefined, undefined, undefined, tiebreak);
    },
    top: (board: string, window?: string) => () => ranking.top(board, window, 0, 10),
    lookup: (board: string) => (n: number) => ranking.item(board, 'day', itemOf(n)),
  };
}

/** The plain boards' calls (each with an `id`) and those of order, allTime and tiebreak beside them. */
function boardCases(graph: RankingGraph): Case[] {
  const { increment, score, top, lookup } = callsOf(graph);
  return [
    { option: 'plain sum board', call: 'increment', id: 'increment', run: increment('plain') },
    { option: 'plain sum board', call: 'top-10', id: 'top-10', run: top('plain', 'day') },
    { option: 'plain sum board', call: 'item lookup', id: 'lookup', run: lookup('plain') },
    { option: 'plain max board', call: 'score', id: 'score', base: 'increment', run: score('max') },
    { option: 'plain max board', call: 'top-10', id: 'max top-10', base: 'top-10', run: top('max', 'day') },
    { option: 'order: asc (min board)', call: 'score', base: 'score', run: score('asc') },
    { option: 'order: asc (min board)', call: 'top-10 ascending', base: 'max top-10', run: top('asc', 'day') },
    { option: 'sum board, maxItems', call: 'increment', id: 'capped increment', run: increment('capped') },
    { option: 'sum board, maxItems', call: 'top-10', id: 'capped top-10', run: top('capped', 'day') },
    { option: 'allTime window, maxItems', call: 'increment', base: 'capped increment', run: increment('ever') },
    { option: 'allTime window, maxItems', call: 'top-10', base: 'capped top-10', run: top('ever', 'ever') },
    { option: 'tiebreak (max board)', call: 'score with tiebreak', base: 'score', run: score('tiebreak') },
    { option: 'tiebreak (max board)', call: 'top-10', base: 'max top-10', run: top('tiebreak', 'day') },
  ];
}

/** A write, then a read, as one case. */
function pair(write: Case['run'], read: Case['run']): Case['run'] {
  return async (n: number) => {
    await write(n);
    return read(n);
  };
}

/** Leagues on a calendar day: the increment, an item's league and a cohort's page, beside the calendar board. */
function leagueCases(graph: RankingGraph): Case[] {
  const { increment } = callsOf(graph);
  const leagues = graph.module.get(LeaguesService);
  const cohorts = Math.floor(ITEMS / 30);
  const cohort = (n: number) => leagues.cohort('league', 't1', 1 + (n % cohorts), { offset: 0, limit: 30 });
  return [
    { option: 'leagues (calendar day)', call: 'increment', base: 'calendar increment', run: increment('league') },
    {
      option: 'leagues (calendar day)',
      call: "item's league",
      base: 'calendar lookup',
      run: (n) => leagues.item('league', itemOf(n)),
    },
    { option: 'leagues (calendar day)', call: 'cohort page of 30', base: 'top-10', run: cohort },
  ];
}

/** GET …/rank and …/distribution on the plain board; leagues and a group board beside their plain boards. */
function readCases(graph: RankingGraph): Case[] {
  const { increment, top, lookup } = callsOf(graph);
  const { standing } = graph;
  const rank = () => standing.rank({ name: 'plain', window: 'day', score: 500 });
  const distribution = () => standing.distribution({ name: 'plain', window: 'day', buckets: 10 });
  const group = 'groupOf (the group board)';
  return [
    { option: 'GET …/rank (plain sum board)', call: 'rank of score 500', base: 'lookup', run: rank },
    {
      option: 'GET …/distribution (plain sum board)',
      call: '10 buckets, quantiles',
      base: 'top-10',
      run: distribution,
    },
    { option: 'calendar-day sum board', call: 'increment', id: 'calendar increment', run: increment('calendar') },
    { option: 'calendar-day sum board', call: 'item lookup', id: 'calendar lookup', run: lookup('calendar') },
    ...leagueCases(graph),
    {
      option: 'plain sum board',
      call: 'increment, then top-10',
      id: 'pair',
      run: pair(increment('plain'), top('plain', 'day')),
    },
    { option: 'groupOf (its member board)', call: 'member increment', base: 'increment', run: increment('members') },
    { option: group, call: 'top-10, settled', base: 'top-10', run: top('teams') },
    {
      option: group,
      call: 'member increment, then top-10',
      base: 'pair',
      run: pair(increment('members'), top('teams')),
    },
  ];
}

/** Calls, commands run and µs of the script calls since the last RESETSTAT (INFO commandstats). */
function tally(commandstats: string): { fcalls: number; commands: number; usec: number } {
  const totals = { fcalls: 0, commands: 0, usec: 0 };
  for (const [, name, calls, usec] of commandstats.matchAll(/^cmdstat_([\w|]+):calls=(\d+),usec=(\d+)/gm)) {
    if (name === 'info' || name === 'config') continue;
    if (/^(fcall|fcall_ro|evalsha|eval)$/.test(name)) {
      totals.fcalls += Number(calls);
      totals.usec += Number(usec);
    } else totals.commands += Number(calls);
  }
  return totals;
}

/** Where the calls run: a plain redis-server, or one under callgrind (`callgrind` set) counting instructions. */
interface Bench {
  redis: Redis;
  graph: RankingGraph;
  callgrind?: Callgrind;
}

async function measureRound(bench: Bench, c: Case, figures: Figures): Promise<void> {
  const { redis, callgrind } = bench;
  await c.run(0);
  // Lua's collector steps as calls allocate: each count starts from a collected state.
  if (callgrind) await redis.fcall('tb_bench_collect', 0);
  await redis.config('RESETSTAT');
  if (callgrind) dumpCounts(callgrind);
  for (let n = 1; n <= CALLS; n++) await c.run(n);
  if (callgrind) figures.instructions.push(dumpCounts(callgrind).counts.Ir / CALLS);
  const { fcalls, commands, usec } = tally(await redis.info('commandstats'));
  figures.fcalls.push(fcalls / CALLS);
  figures.commands.push(commands / CALLS);
  figures.usec.push(usec / CALLS);
}

function table(all: Case[], figures: Figures[], counted: boolean): string[] {
  const plain = new Map(all.flatMap((c, i) => (c.id === undefined ? [] : [[c.id, { c, f: figures[i] }] as const])));
  // Under callgrind µs mean nothing: the instructions take their place.
  const work = (f: Figures) => median(counted ? f.instructions : f.usec);
  const ratio = (value: number, of: number) => (of > 0 ? `×${(value / of).toFixed(2)}` : '—');
  const rows = all.map((c, i) => {
    const f = figures[i];
    const base = c.base === undefined ? undefined : plain.get(c.base);
    const name = base && `${base.c.option.replace('plain ', '')} ${base.c.call}`;
    const against = base
      ? `${name}: ${ratio(median(f.commands), median(base.f.commands))} / ${ratio(work(f), work(base.f))}`
      : '';
    const cells = [
      median(f.fcalls).toFixed(1),
      median(f.commands).toFixed(1),
      counted ? Math.round(work(f)).toLocaleString('en') : work(f).toFixed(1),
    ];
    return `| ${c.option} | ${c.call} | ${cells.join(' | ')} | ${against} |`;
  });
  const unit = counted ? 'instructions' : 'µs in Redis';
  return [
    `| option | call | function calls | Redis commands | ${unit} | plain board’s same call: commands / ${unit} |`,
    '| --- | --- | ---: | ---: | ---: | --- |',
    ...rows,
  ];
}

/** The graph over a private redis-server (COMPETITION_BENCH_INSTRUCTIONS=1: under callgrind). */
async function withBench(run: (bench: Bench) => Promise<void>): Promise<void> {
  // Seeding places 1 000 players a batch: past a default write call's cost bound.
  const settings = { WRITE_COST_PER_CALL: '100000' };
  if (INSTRUCTIONS) {
    let dir = '';
    try {
      await withCallgrindRanking(
        NOON_MS,
        async ({ server, redis, graph }) => {
          dir = server.dir;
          await redis.function('LOAD', 'REPLACE', COLLECT_LIBRARY);
          await run({ redis, graph, callgrind: server });
        },
        settings,
      );
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
    return;
  }
  const server = await startRedisServer();
  const redis = new Redis(server.url);
  const config = validateConfig({ ...settings, REDIS_URL: server.url });
  const clock = new FakeClock(NOON_MS);
  const service = new RedisService(RedisSettings.from(config), clock);
  try {
    await service.waitUntilReady(10_000);
    await run({ redis, graph: await composeRanking(service, new RedisFunctions(service), config, clock) });
  } finally {
    redis.disconnect();
    await service.onApplicationShutdown();
    await stopChild(server.child);
  }
}

export async function competitionOptionsBench(): Promise<void> {
  await withBench(async (bench) => {
    await boards(bench.graph);
    const all = [...boardCases(bench.graph), ...readCases(bench.graph)];
    const figures = all.map((): Figures => ({ fcalls: [], commands: [], usec: [], instructions: [] }));
    const before = loadAverage();
    for (let round = 0; round < ROUNDS; round++)
      for (const [i, c] of all.entries()) await measureRound(bench, c, figures[i]);
    const how = INSTRUCTIONS ? 'under callgrind' : `load average ${before} before, ${loadAverage()} after`;
    console.log(
      `## Competition options (issue #48): ${ITEMS.toLocaleString('en')} items a board, ${CALLS} calls × ${ROUNDS} rounds, medians (${how})\n`,
    );
    for (const line of table(all, figures, INSTRUCTIONS)) console.log(line);
    console.log('');
  });
}
