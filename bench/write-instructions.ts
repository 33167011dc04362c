/**
 * The writes of the board of every option in Redis instructions (issue #45: the worst-case rows of
 * 12–18 ms a call): `npm run bench -- --part write-instructions`, about ten minutes.
 * redis-server runs under callgrind (startCallgrindRedis), which counts the instructions it executes
 * whatever else the machine does, here only while a measured write runs. The harness's boards (harness/worst-case/boards.ts) at its `ci` sizes,
 * those the rows WRITE_BENCH_ROWS selects write on (`WRITE_BENCH_ROWS='batch of 1:'`: wc-seg's single write alone), seeded as seed.ts seeds them and moderated as the moderation rows leave them; then each row's write,
 * WRITE_BENCH_ATTEMPTS times, each call counted alone: its instructions, its script commands, and the
 * costliest of them (SLOWLOG of every command, in valgrind's microseconds: a share, not a time). Instructions are
 * counted on every thread and on Redis' main thread alone (the keys a call unlinks are freed on a background one);
 * WRITE_BENCH_FCALL_ONLY=1 counts only inside the FCALLs (callgrind's --toggle-collect=fcallCommand): on a loaded
 * host a call lasts seconds under valgrind, and the server's timer work falling inside it moved rows by 0.5-4 M.
 */
import Redis from 'ioredis';
import { SIZES } from '../harness/worst-case/boards';
import { type RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { ModerationService } from '../src/ranking/moderation/moderation.service';
import { MODERATED_ITEMS_PER_SHARD } from '../src/ranking/core/ranking.limits';
import { RANKING } from '../src/ranking/ranking.functions';
import { WriteCommands } from '../src/ranking/writes/write-commands';
import { CUTS, WORK_BUDGET } from './write-cuts';
import { counting, dumpCounts, scriptCommandsOf, type Callgrind } from './redis-instructions';
import { withCallgrindRanking } from './callgrind-ranking';
import { batches, putHarnessBoard, seedModeratedGroups, sumEntry } from './write-bench-seed';
import { coalescedLabels, coalescedRows, seedCoalescedBoards } from './coalesced-call-rows';

const SIZE = SIZES.ci;
/** moderation_count_lib's INDEXES_PER_CALL: the most windows' indexes of the hidden items' scores a write's call builds. */
const INDEXES_PER_CALL = Number(/local INDEXES_PER_CALL = (\d+)/.exec(RANKING.library.source)?.[1]);
/** The mid-table requests of wc-modgroups' 8 windows one coalesced call applies within WORK_BUDGET. */
const MODERATED_PER_CALL = WORK_BUDGET / 8;
const ATTEMPTS = Number(process.env.WRITE_BENCH_ATTEMPTS ?? 3);
const ROWS = new RegExp(process.env.WRITE_BENCH_ROWS ?? '.');
const segmentsOf = (seed: number) => Array.from({ length: 8 }, (_, k) => `s${(seed + k) % 64}`);
type Slowlog = Array<[number, number, number, string[], string]>;

interface Bench {
  server: Callgrind;
  redis: Redis;
  graph: RankingGraph;
  clock: FakeClock;
  commands: WriteCommands;
}

/** Whether a row WRITE_BENCH_ROWS selects writes on `board` (named in its label): only those boards are seeded. */
const measures = (bench: Bench, board: string) =>
  [...coalescedLabels(), ...ownRows(bench, () => Promise.resolve()).map(([name]) => name)].some(
    (name) => ROWS.test(name) && name.includes(board),
  );

/** seed.ts's sum boards, moderated groups and snapshot boundaries; the moderation rows' states. */
async function seed(bench: Bench): Promise<void> {
  const { graph, clock } = bench;
  const { items } = SIZE;
  if (measures(bench, 'wc-seg')) {
    await putHarnessBoard(graph, 'wc-seg');
    await batches(bench, 'wc-seg', items, sumEntry);
  }
  if (measures(bench, 'plain')) {
    await graph.ranking.putBoard({ name: 'plain', windows: [{ name: 'm', period: '1h', interval: '1m' }] });
    await batches(bench, 'plain', items, (n) => ({ item: `i${n}`, amount: items - n }));
  }
  if (measures(bench, 'wc-modgroups')) await seedModeratedGroups(bench);
  if (coalescedLabels().some((label) => ROWS.test(label) && !label.endsWith('(plain)')))
    await seedCoalescedBoards(
      graph,
      (name) => putHarnessBoard(graph, 'wc-sum', name),
      (board) => batches(bench, board, items, (n) => ({ item: `i${n}`, amount: items - n })),
    );
  const sum = measures(bench, 'wc-sum');
  if (sum) await putHarnessBoard(graph, 'wc-sum');
  if (sum) await batches(bench, 'wc-sum', items, sumEntry);
  // The boundaries pass whichever boards are seeded: the rows write minutes after the seeding.
  for (let boundary = 0; boundary < SIZE.snapshots; boundary++) {
    clock.advanceMs(60_000);
    if (sum) await batches(bench, 'wc-sum', 8, (n) => ({ item: `i${n}`, amount: 1, actor: 'a0', segments: ['s0'] }));
  }
  if (!sum) return;
  const moderation = graph.module.get(ModerationService);
  const step = Math.floor(items / MODERATED_ITEMS_PER_SHARD);
  for (let k = 0; k < MODERATED_ITEMS_PER_SHARD; k++)
    await moderation.setState({ name: 'wc-sum', item: `i${k * step}`, state: 'hidden' });
}

/** Writes measured so far: each names new items and actors of its own. */
let written = 0;
const fresh = (n: number) => `fresh-${written}-${n}`;

type Increment = (fields: Parameters<WriteCommands['increment']>[0]) => Promise<unknown>;
type Rows = Array<[string, () => Promise<unknown>]>;

/** The worst-case rows' writes (board-rows.ts, moderation-rows.ts), and plain increments beside them. */
function ownRows(bench: Bench, increment: Increment): Rows {
  return [
    ['plain increment, 1-window board', () => increment({ board: 'plain', item: 'i5', amount: 1 })],
    ['plain increment of an existing item, wc-sum', () => increment({ board: 'wc-sum', item: 'i1501', amount: 1 })],
    ...moderatedRows(bench, increment),
    ...freshRows(bench, increment),
    ...segmentedBatchRows(bench),
    sameActorRow(bench),
  ];
}

/** The coalesced rows (they size their calls from the seeded boards' configs), then the others. */
async function rows(bench: Bench): Promise<Rows> {
  const { graph, commands } = bench;
  const increment: Increment = (fields) => graph.ranking.increment(commands.increment(fields));
  return [...(await coalescedRows(graph, increment)), ...ownRows(bench, increment)];
}

/**
 * Drops wc-modgroups' moderation indexes, as a moderation change does ('all': every index and its
 * registry), or the first `count` of them (each taken out of its shard's registry too).
 */
async function dropIndexes(bench: Bench, count: number | 'all'): Promise<void> {
  if (count === 'all') {
    const keys = await bench.redis.keys('*board:wc-modgroups}:*ex*');
    if (keys.length > 0) await bench.redis.unlink(...keys);
    return;
  }
  const indexes = await bench.redis.keys('*board:wc-modgroups}:*exheld');
  for (const index of indexes.slice(0, count)) {
    const registry = `${index.slice(0, index.indexOf('}:') + 2)}exidx`;
    await bench.redis.srem(registry, index.replace(/exheld$/, 'top'));
    await bench.redis.unlink(index);
  }
}

/** Writes of existing items on wc-modgroups: one, one that builds the windows' indexes, and coalesced ones. */
function moderatedRows(bench: Bench, increment: Increment): Rows {
  return [
    [
      'existing item, 8 windows 8 views, moderation maxima (wc-modgroups)',
      () => increment({ board: 'wc-modgroups', item: 'i1500', amount: 1 }),
    ],
    [
      // The write after a moderation change (which drops them): each window's index of the hidden items' scores built
      // first, a few a call (INDEXES_PER_CALL), the calls summed.
      "existing item, 8 windows 8 views, moderation maxima, building its windows' indexes (wc-modgroups)",
      async () => {
        await dropIndexes(bench, 'all');
        return increment({ board: 'wc-modgroups', item: 'i1500', amount: 1 });
      },
    ],
    [
      // The call that applies after the others built the rest: the most indexes a call builds (INDEXES_PER_CALL).
      `existing item, 8 windows 8 views, moderation maxima, building ${INDEXES_PER_CALL} of its windows' indexes (wc-modgroups)`,
      async () => {
        await dropIndexes(bench, INDEXES_PER_CALL);
        return increment({ board: 'wc-modgroups', item: 'i1500', amount: 1 });
      },
    ],
    ...coalescedModeratedRows(increment),
  ];
}

/**
 * Coalesced writes of existing items mid-table on wc-modgroups: 16 (in calls of at most increment.lua's WORK_BUDGET),
 * one (the call's own part), and the most within WORK_BUDGET: what each call of the 16 is at most; the last two's
 * difference is what each request adds.
 */
function coalescedModeratedRows(increment: Increment): Rows {
  return [16, 1, MODERATED_PER_CALL].map((requests, row) => [
    `coalesced: ${requests} existing items mid-table, moderation maxima (wc-modgroups)`,
    () =>
      Promise.all(
        Array.from({ length: requests }, (_, k) =>
          increment({ board: 'wc-modgroups', item: `i${row === 0 ? 1400 + k : 1200 + 10 * requests + k}`, amount: 1 }),
        ),
      ),
  ]);
}

/** Writes that bring new items, actors or users with segments (wc-sum, wc-seg). */
function freshRows(bench: Bench, increment: Increment): Rows {
  const { graph, commands } = bench;
  return [
    [
      'new item, new actor, 1 segment (wc-sum)',
      () =>
        increment({
          board: 'wc-sum',
          item: fresh(0),
          amount: 3,
          actor: fresh(1),
          segments: segmentsOf(written).slice(0, 1),
        }),
    ],
    [
      'like, new user, 1 segment (wc-sum)',
      () =>
        graph.ranking.like(
          commands.like({ board: 'wc-sum', item: 'i1', userId: fresh(2), segments: segmentsOf(written).slice(0, 1) }),
        ),
    ],
    [
      'batch of 1: existing item, new actor, 8 segments (wc-seg)',
      () =>
        graph.ranking.incrementBatch(
          commands.batch({
            board: 'wc-seg',
            entries: [{ item: 'i0', amount: 1, actor: fresh(3), segments: segmentsOf(0) }],
          }),
        ),
    ],
  ];
}

/** wc-seg's single write of an actor the item already has in every window: from the second attempt on (each attempt's call at the same time). */
function sameActorRow(bench: Bench): Rows[number] {
  const { graph, commands } = bench;
  return [
    'batch of 1: existing item, the same actor each attempt, 8 segments (wc-seg)',
    () =>
      graph.ranking.incrementBatch(
        commands.batch({
          board: 'wc-seg',
          entries: [{ item: 'i1', amount: 1, actor: 'again', segments: segmentsOf(0) }],
        }),
      ),
  ];
}

/**
 * Batches of several entries on wc-seg at the write bound (WRITE_COST_PER_CALL): each entry an existing item
 * with a new actor in `segments` segments, as many as the default bound takes. The bench runs under a bound
 * past any, so each is one call here: the rows of as many entries as one of its calls carries under the
 * default bound (write-cost.ts callEntries) are what each of its calls runs there.
 */
function segmentedBatchRows(bench: Bench): Rows {
  const { graph, commands } = bench;
  const batch = (entries: number, segments: number) => () =>
    graph.ranking.incrementBatch(
      commands.batch({
        board: 'wc-seg',
        entries: Array.from({ length: entries }, (_, n) => ({
          item: `i${n}`,
          amount: 1,
          actor: fresh(10 + n),
          segments: segmentsOf(n).slice(0, segments),
        })),
      }),
    );
  return [
    ['batch of 25: existing items, new actors, no segment (wc-seg)', batch(25, 0)],
    ['batch of 9: existing items, new actors, no segment (wc-seg)', batch(9, 0)],
    ['batch of 6: existing items, new actors, 1 segment each (wc-seg)', batch(6, 1)],
    ['batch of 3: existing items, new actors, 1 segment each (wc-seg)', batch(3, 1)],
    ['batch of 3: existing items, new actors, 2 segments each (wc-seg)', batch(3, 2)],
  ];
}

/** The FCALLs Redis has run so far (INFO commandstats: a RESETSTAT would cost each command its histogram again). */
async function fcalls(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats');
  return [...stats.matchAll(/cmdstat_fcall(?:_ro)?:calls=(\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/**
 * One write's calls: instructions, FCALLs, script commands and the costliest kinds of them (their instructions,
 * from the dump: scriptCommandsOf). WRITE_BENCH_ARGV=1 also prints each command (SLOWLOG, on only then: its
 * entries are counted inside the call).
 */
async function measure(bench: Bench, label: string, write: () => Promise<unknown>): Promise<void> {
  const { server, redis } = bench;
  const argv = process.env.WRITE_BENCH_ARGV === '1';
  await redis.config('SET', 'slowlog-log-slower-than', argv ? '0' : '-1');
  await redis.slowlog('RESET');
  const before = await fcalls(redis);
  counting(server, true);
  dumpCounts(server);
  written++;
  await write();
  const { counts, main, file } = dumpCounts(server);
  counting(server, false);
  const calls = (await fcalls(redis)) - before;
  if (argv)
    for (const [, , , args, client] of ((await redis.slowlog('GET', 100_000)) as Slowlog).reverse())
      if (client === '?:0') console.log(`argv ${args.slice(0, 6).join(' ')}`);
  const commands = scriptCommandsOf(file);
  const inCommands = commands.reduce((sum, one) => sum + one.ir, 0);
  const total = commands.reduce((sum, one) => sum + one.calls, 0);
  const parts = commands.slice(0, 4).map((one) => `${one.name} ${one.calls} (${(one.ir / 1e6).toFixed(2)} M)`);
  console.log(
    `| ${label} | ${calls} | ${(counts.Ir / 1e6).toFixed(2)} | ${(main.Ir / 1e6).toFixed(2)} | ${total} | ${Math.round((100 * inCommands) / main.Ir)} % | ${parts.join(', ')} |`,
  );
}

/** Each cut of CUTS named in WRITE_BENCH_CUTS (a regular expression of labels), then the library as it is. */
async function measureCuts(bench: Bench): Promise<void> {
  const asked = process.env.WRITE_BENCH_CUTS ? new RegExp(process.env.WRITE_BENCH_CUTS) : null;
  const cuts = CUTS.filter((one) => asked?.test(one.label));
  // Loaded again only after a cut: a library loaded anew pays its caches again in its first calls.
  if (cuts.length === 0) return;
  for (const cut of cuts) {
    if (!RANKING.library.source.includes(cut.from)) throw new Error(`the library no longer holds "${cut.from}"`);
    await bench.redis.function('LOAD', 'REPLACE', RANKING.library.source.split(cut.from).join(cut.to));
    console.log(`| **cut: ${cut.label}** | | | | | | |`);
    await measureRows(bench);
  }
  await bench.redis.function('LOAD', 'REPLACE', RANKING.library.source);
}

/**
 * WRITE_BENCH_COLD=1: wc-seg's costliest single write, each attempt on a board of wc-seg's options and seeding
 * that no call wrote before it (seeded first, uncounted): its first write finds none of its keys in the caches
 * the library keeps from call to call, as a write of a board no recent call wrote does.
 */
const COLD = process.env.WRITE_BENCH_COLD === '1';

async function measureColdBoards(bench: Bench): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const board = `wc-segcold${attempt}`;
    await putHarnessBoard(bench.graph, 'wc-seg', board);
    await batches(bench, board, SIZE.items, sumEntry);
    const entries = [{ item: 'i0', amount: 1, actor: fresh(3), segments: segmentsOf(0) }];
    await measure(
      bench,
      `batch of 1: existing item, new actor, 8 segments, a board no call wrote before (${attempt + 1})`,
      () => bench.graph.ranking.incrementBatch(bench.commands.batch({ board, entries })),
    );
  }
}

async function measureRows(bench: Bench): Promise<void> {
  if (COLD) return measureColdBoards(bench);
  for (const [label, write] of (await rows(bench)).filter(([name]) => ROWS.test(name)))
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) await measure(bench, `${label} (${attempt + 1})`, write);
}

export async function writeInstructionsBench(): Promise<void> {
  await withCallgrindRanking(
    1_700_000_000_000,
    async ({ server, redis, graph, clock }) => {
      const bench: Bench = { server, redis, graph, clock, commands: new WriteCommands(clock) };
      await seed(bench);
      await redis.config('SET', 'slowlog-max-len', '100000');
      console.log(
        '| write (attempt) | calls | M instructions | on the main thread | commands | in commands | costliest commands (their instructions) |',
      );
      console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- |');
      await measureCuts(bench);
      await measureRows(bench);
    },
    { WRITE_COST_PER_CALL: '1000000' },
    // Seeding counted nothing: Redis runs it several times faster. A file per thread: the main thread's apart.
    [
      '--instr-atstart=no',
      '--separate-threads=yes',
      // WRITE_BENCH_FCALL_ONLY=1: only what runs inside an FCALL (the call's script and its commands), without the
      // server's timer work that a slow host lets fall inside a counted call (serverCron, 10 times a wall second).
      ...(process.env.WRITE_BENCH_FCALL_ONLY === '1' ? ['--toggle-collect=fcallCommand'] : []),
    ],
  );
}
