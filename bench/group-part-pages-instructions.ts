/**
 * The paged shape of group-history-instructions (issues #45/#48): a group heavier than a crossing call
 * on one shard, its part recorded a page a call (group_part_pages_lib). A member board of PAGED_SHARDS
 * shards (a group may hold 5 000 members on one), its window 5 minutes of 1-minute slots: `big`, 2 000
 * members all on shard 0 (top 1 000), beside `a`, 300 there (recorded first, in the same call as
 * big's first page); every member written in each of the 5 slots, then 4 minutes with no call. The
 * history reads (each at most MAX_READ_DRAIN_CALLS calls) then cross shard 0: its part at the boundary it wrote before (each group's best 1 000
 * read from its zset, a page a call), then its quiet parts of the 3 boundaries after it, where 1 to 3
 * slots left the window (each member's score less those slots' values, a page of members a call, then
 * the best 1 000 read from the staged scores). Each FCALL counted; those that moved a part's paging
 * state (its paging fields, its staged keys <part>:hz and <part>:ht) are the paged ones.
 */
import type Redis from 'ioredis';
import { type RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { shardOf } from '../src/ranking/core/shard-math';
import { WindowDrainingError } from '../src/common/errors';
import { withCallgrindRanking, perFcall, type CountedFcall } from './callgrind-ranking';
import { counting } from './redis-instructions';

const PAGED_SHARDS = 4;
const GROUPS = { a: 300, big: 2000 };
const SLOTS = 5;
const MINUTE_MS = 60_000;

/** `count` items of shard 0, named after `group`. */
function shardZero(group: string, count: number): string[] {
  const names: string[] = [];
  for (let k = 0; names.length < count; k++)
    if (shardOf(`${group}-${k}`, PAGED_SHARDS) === 0) names.push(`${group}-${k}`);
  return names;
}

const MEMBERS = Object.entries(GROUPS).map(([group, count]) => ({ group, items: shardZero(group, count) }));

async function seed(graph: RankingGraph, clock: FakeClock): Promise<void> {
  await graph.ranking.putBoard({
    name: 'pm',
    windows: [{ name: 'm', period: 5 * 60, interval: 60, snapshots: { keep: 10, top: 1000 } }],
    shards: PAGED_SHARDS,
  });
  await graph.ranking.putBoard({ name: 'pt', groupOf: { board: 'pm', window: 'm', top: 1000, decay: 1 } });
  for (const { group, items } of MEMBERS)
    for (let first = 0; first < items.length; first += 100)
      await Promise.all(
        items.slice(first, first + 100).map((item) => graph.groupBoards.setMember({ name: 'pt', group, item })),
      );
  const entries = MEMBERS.flatMap(({ items }) => items).map((item, k) => ({ item, amount: 1 + (k % 97) }));
  for (let slot = 0; slot < SLOTS; slot++) {
    if (slot > 0) clock.advanceMs(MINUTE_MS);
    for (let first = 0; first < entries.length; first += 1000)
      await graph.ranking.incrementBatch('pm', entries.slice(first, first + 1000));
  }
  await graph.ranking.history('pt', undefined, undefined).catch(() => undefined);
  clock.advanceMs(4 * MINUTE_MS);
}

/** The parts' paging state now: each part's paging fields, its staged keys' sizes (group_part_pages_lib). */
async function pagingState(redis: Redis): Promise<string> {
  const [state, fields] = [[] as string[], new Map<string, string>()];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', '*:part:*', 'COUNT', 10_000);
    for (const key of keys) {
      if (key.endsWith(':hz')) state.push(`${key} ${await redis.zcard(key)}`);
      else if (key.endsWith(':ht')) state.push(`${key} ${await redis.strlen(key)}`);
      else fields.set(key, (await redis.hmget(key, '\x1da', '\x1ds', '\x1dr', '\x1dm')).join(','));
    }
    cursor = next;
  } while (cursor !== '0');
  // A part no group is paged in (none of its fields): a light group's record, not a page.
  for (const [key, held] of fields) if (held !== ',,,') state.push(`${key} ${held}`);
  return state.sort().join('\n');
}

/**
 * History reads of `pt` until one answers: a read takes at most MAX_READ_DRAIN_CALLS calls of the
 * crossing and answers 503 WINDOW_DRAINING past them (the next goes on from there). Answers the reads.
 */
async function readUntilAnswered(graph: RankingGraph): Promise<number> {
  for (let reads = 1; ; reads++) {
    try {
      await graph.ranking.history('pt', undefined, undefined);
      return reads;
    } catch (error) {
      if (!(error instanceof WindowDrainingError) || reads >= 50) throw error;
    }
  }
}

const m = (n: number) => (n / 1e6).toFixed(2);

/** The paged calls' count, median and max instructions inside their FCALL, their functions, the costliest's commands. */
export function pagedFigures(calls: CountedFcall[], commandsOf: (call: CountedFcall) => string): string {
  const paged = calls.filter((call) => call.staged).sort((a, b) => a.own - b.own);
  if (paged.length === 0) return 'no paged call';
  const [median, top] = [paged[Math.floor((paged.length - 1) / 2)].own, paged[paged.length - 1]];
  const names = [...new Set(paged.map((call) => call.name))].join(', ');
  const over = paged.filter((call) => call.own > 10e6).length;
  return `${paged.length} paged calls (${names}): median ${m(median)} M, max ${m(top.own)} M (${commandsOf(top)}), ${over} over 10 M`;
}

/** Runs the paged shape, reporting each function's calls (`report`) and the paged calls apart. */
export async function groupPartPagesInstructions(
  report: (label: string, calls: CountedFcall[]) => void,
  commandsOf: (call: CountedFcall) => string,
): Promise<void> {
  await withCallgrindRanking(
    Date.UTC(2026, 11, 4),
    async ({ server, redis, graph, clock }) => {
      await seed(graph, clock);
      counting(server, true);
      let [reads, state] = [0, await pagingState(redis)];
      // A paged call moves a part's paging state: a page staged, or the group written whole and its staging dropped.
      const moved = async () => state !== (state = await pagingState(redis));
      const calls = await perFcall(server, async () => (reads = await readUntilAnswered(graph)), moved);
      report(`history reads (${reads}) past a paged part and 3 quiet ones`, calls);
      console.log(`  ${pagedFigures(calls, commandsOf)}`);
    },
    { KEY_PREFIX: 'bgp:', REDIS_AUTO_PIPELINING: 'false' },
    ['--instr-atstart=no'],
  );
}
