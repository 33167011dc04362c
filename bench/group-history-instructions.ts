/**
 * A group board's history over a member board of 64 shards, counted in Redis instructions (issues
 * #45/#48; `npm run bench -- --part group-history-instructions`, a few minutes):
 * redis-server under callgrind (withCallgrindRanking), the worst-case harness's shape: 2 groups of
 * 1 000 scored members (top 1 000, keep 1 000), g0's members all on shard 0, g1's spread over every
 * shard, both dirty at the member window's boundary. Each FCALL of the history read there (each
 * shard's crossing records its part, group_parts_lib; the settle round merges them on shard 0), then
 * of the retraction of g0's best member: its function, instructions and the commands its script ran.
 * Then the paged shape (./group-part-pages-instructions.ts): a group of 2 000 members on one shard.
 */
import { type RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { SHARDS_PER_BOARD } from '../src/ranking/core/ranking.limits';
import { MAX_MEMBERS_PER_BOARD, MAX_MEMBERS_PER_GROUP } from '../src/ranking/options/group-of/group-of.limits';
import { shardOf } from '../src/ranking/core/shard-math';
import { withCallgrindRanking, perFcall, type CountedFcall } from './callgrind-ranking';
import { counting, scriptCommandsOf, type Callgrind } from './redis-instructions';
import { groupPartPagesInstructions } from './group-part-pages-instructions';

const MEMBERS = 1000;
const SHARDS = SHARDS_PER_BOARD.max;

/** A group's most members on one shard of the member board (group-boards.store.ts's limitsOf). */
const PER_SHARD = Math.ceil((2 * MAX_MEMBERS_PER_GROUP) / SHARDS);
/** Groups g1.. of PER_SHARD members all on shard 0: shard 0 at about its most members. */
const SHARD0_GROUPS = Math.floor((2 * MAX_MEMBERS_PER_BOARD) / SHARDS / PER_SHARD) - 1;

/** g0's MEMBERS members spread over every shard; g1.. PER_SHARD members each, all on shard 0. */
function members(group: number): string[] {
  const names: string[] = [];
  for (let k = 0; names.length < (group === 0 ? MEMBERS : PER_SHARD); k++) {
    const item = `q${group}-${k}`;
    if (group === 0 || shardOf(item, SHARDS) === 0) names.push(item);
  }
  return names;
}

async function seed(graph: RankingGraph, clock: FakeClock): Promise<void> {
  const snapshots = { keep: 1000, top: 1000 };
  await graph.ranking.putBoard({
    name: 'hm',
    windows: [{ name: 'm', period: 3600, interval: 60, snapshots }],
    shards: SHARDS,
  });
  await graph.ranking.putBoard({ name: 'ht', groupOf: { board: 'hm', window: 'm', top: MEMBERS, decay: 1 } });
  for (let g = 0; g <= SHARD0_GROUPS; g++) {
    const items = members(g);
    for (let first = 0; first < items.length; first += 100)
      await Promise.all(
        items
          .slice(first, first + 100)
          .map((item) => graph.groupBoards.setMember({ name: 'ht', group: `g${g}`, item })),
      );
    const entries = items.map((item, k) => ({ item, amount: 1 + k }));
    for (let first = 0; first < entries.length; first += 1000)
      await graph.ranking.incrementBatch('hm', entries.slice(first, first + 1000));
  }
  await graph.ranking.history('ht', undefined, undefined).catch(() => undefined);
  await graph.ranking.incrementBatch(
    'hm',
    [0, 1].map((g) => ({ item: members(g)[0], amount: 1 })),
  );
  clock.advanceMs(60_000);
}

const m = (n: number) => (n / 1e6).toFixed(2);

/**
 * Each function's calls, ranked by the instructions inside their FCALL (`own`: what a call holds Redis's
 * main thread for); beside it the whole dump's (`ir`: serverCron, which callgrind's slowness lets fire
 * mid-call, and a lazy free on the background thread, up to ~5 M more).
 */
export function report(label: string, calls: CountedFcall[]): void {
  const costliest = calls.reduce((a, b) => (b.own > a.own ? b : a));
  const byName = new Map<string, CountedFcall[]>();
  for (const call of calls) byName.set(call.name, [...(byName.get(call.name) ?? []), call]);
  const total = calls.reduce((sum, call) => sum + call.own, 0);
  console.log(`${label}: ${calls.length} FCALLs, ${m(total)} M instructions inside them in all`);
  for (const [name, those] of byName) {
    const top = those.reduce((a, b) => (b.own > a.own ? b : a));
    const over = those.filter((call) => call.own > 10e6).length;
    const dumped = `${m(top.ir)} M with what ran beside it`;
    console.log(
      `  ${name}: ${those.length} calls (${over} over 10 M), max ${m(top.own)} M (${dumped}), ${commandsOf(top)}`,
    );
  }
  console.log(`  costliest: ${costliest.name} ${m(costliest.own)} M (${m(costliest.ir)} M dumped)`);
}

/** The commands `call`'s script ran: their count, then the costliest few. */
export function commandsOf(call: CountedFcall): string {
  const commands = scriptCommandsOf(call.file);
  const count = commands.reduce((sum, c) => sum + c.calls, 0);
  const named = commands.slice(0, 4).map((c) => `${c.name} ${c.calls}x ${m(c.ir)} M`);
  return `${count} commands (${named.join('; ')})`;
}

async function retractionCalls(server: Callgrind, graph: RankingGraph): Promise<CountedFcall[]> {
  return perFcall(server, async () => {
    const item = members(0)[MEMBERS - 1];
    const { body } = await graph.retractions.start('hm', { kind: 'item', id: item });
    // Settled: shard 0's group listings (group_history_retract) follow the item's shard's steps.
    await graph.retractions.settled('hm', body.id);
  });
}

/** The 64-shard shape above. */
async function wideShape(): Promise<void> {
  await withCallgrindRanking(
    Date.UTC(2026, 11, 4),
    async ({ server, graph, clock }) => {
      await seed(graph, clock);
      counting(server, true);
      report(
        'history read at the boundary',
        await perFcall(server, () => graph.ranking.history('ht', undefined, undefined)),
      );
      report("retraction of g1's best member", await retractionCalls(server, graph));
    },
    { KEY_PREFIX: 'bgh:', REDIS_AUTO_PIPELINING: 'false' },
    ['--instr-atstart=no'],
  );
}

/** GROUP_HISTORY_SHAPES=wide,paged (both by default): the 64-shard shape, the paged one (./group-part-pages-instructions.ts). */
export async function groupHistoryInstructionsBench(): Promise<void> {
  const shapes = (process.env.GROUP_HISTORY_SHAPES ?? 'wide,paged').split(',');
  if (shapes.includes('wide')) await wideShape();
  if (shapes.includes('paged')) await groupPartPagesInstructions(report, commandsOf);
}
