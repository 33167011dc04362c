/**
 * An item retraction's rewrite of a group board's merged listings on shard 0 (group_history_retract),
 * counted in Redis instructions at the documented maxima (issue #45; `npm run bench --
 * --part group-retract-instructions`, a few minutes): redis-server under callgrind (withCallgrindRanking).
 * A member board of 2 shards keeping listings of 1 000 rows (keep 1 000), a group board over it of
 * MAX_GROUPS_PER_BOARD groups counting GROUP_TOP_MEMBERS.max members each: g0 of that many members, each
 * other group one member, every group listed. LISTINGS boundaries merged, then g0's best member retracted:
 * each FCALL of the retraction, its instructions and the commands its script ran (as group-history-instructions.ts).
 * RETRACT_LEAVING=1 retracts instead the one member of a group listed first, which leaves every listing:
 * the rows after it all move up a place (the most a rewrite writes again). RETRACT_SINKING=1 scores g0's
 * other members 1 each, so its group goes from first to last: its record of 1 000 members read and every
 * row written again.
 */
import { type RankingGraph } from '../harness/compose-ranking';
import { FakeClock } from '../harness/clock';
import { GROUP_TOP_MEMBERS, MAX_GROUPS_PER_BOARD } from '../src/ranking/options/group-of/group-of.limits';
import { shardOf } from '../src/ranking/core/shard-math';
import { withCallgrindRanking, perFcall, type CountedFcall } from './callgrind-ranking';
import { counting } from './redis-instructions';
import { commandsOf, report } from './group-history-instructions';

const MEMBERS = GROUP_TOP_MEMBERS.max;
const LISTINGS = 3;
const INTERVAL_MS = 60_000;
const SHARDS = 2;

/** Each group's members: g0's MEMBERS, one each of the others. */
const membersOf = (group: number) =>
  Array.from({ length: group === 0 ? MEMBERS : 1 }, (_, k) => (group === 0 ? `q0-${k}` : `q${group}`));

/**
 * g0's best member: its last one on a shard past 0, so its shard's retract_item leaves shard 0's merged
 * listings to group_history_retract (on shard 0, retract_item's hook rewrites them in its own calls).
 */
const BEST_MEMBER = [...membersOf(0)].reverse().find((item) => shardOf(item, SHARDS) !== 0)!;
/** A one-member group's item past shard 0, scoring above g0's sum, so its group is listed first. */
const LEAVING = Array.from({ length: MAX_GROUPS_PER_BOARD - 1 }, (_, g) => membersOf(g + 1)[0]).find(
  (item) => shardOf(item, SHARDS) !== 0,
)!;
const RETRACTED = process.env.RETRACT_LEAVING === '1' ? LEAVING : BEST_MEMBER;

const SINKING = process.env.RETRACT_SINKING === '1';

/**
 * The `k`th member's amount: the retracted item's above any other member's (leaving: above g0's sum);
 * sinking, g0's other members 1, so that g0 without its best member sums below every other group.
 */
function amountOf(item: string, k: number, joined: number): number {
  if (item === RETRACTED) return RETRACTED === LEAVING ? joined * MEMBERS : 2 * joined;
  return SINKING && k < MEMBERS ? 1 : 1 + k;
}

async function seed(graph: RankingGraph, clock: FakeClock): Promise<void> {
  const snapshots = { keep: 1000, top: 1000 };
  await graph.ranking.putBoard({
    name: 'rm',
    windows: [{ name: 'm', period: 3600, interval: 60, snapshots }],
    shards: 2,
  });
  await graph.ranking.putBoard({ name: 'rt', groupOf: { board: 'rm', window: 'm', top: MEMBERS, decay: 1 } });
  const joins = Array.from({ length: MAX_GROUPS_PER_BOARD }, (_, g) =>
    membersOf(g).map((item) => ({ group: `g${g}`, item })),
  ).flat();
  for (let first = 0; first < joins.length; first += 100)
    await Promise.all(
      joins.slice(first, first + 100).map((join) => graph.groupBoards.setMember({ name: 'rt', ...join })),
    );
  const entries = joins.map(({ item }, k) => ({ item, amount: amountOf(item, k, joins.length) }));
  for (let listing = 0; listing < LISTINGS; listing++) {
    for (let first = 0; first < entries.length; first += 1000)
      await graph.ranking.incrementBatch('rm', entries.slice(first, first + 1000));
    clock.advanceMs(INTERVAL_MS);
    // The group board settles its dirty groups first, a bounded call at a time (a read past them is a 503).
    for (let read = 0; read < 50; read++)
      if (
        await graph.ranking.history('rt', undefined, undefined).then(
          () => true,
          () => false,
        )
      )
        break;
  }
}

export async function groupRetractInstructionsBench(): Promise<void> {
  await withCallgrindRanking(
    Date.UTC(2026, 11, 4),
    async ({ server, graph, clock }) => {
      await seed(graph, clock);
      counting(server, true);
      const calls = await perFcall(server, async () => {
        const { body } = await graph.retractions.start('rm', { kind: 'item', id: RETRACTED });
        // Settled: shard 0's group listings (group_history_retract) follow the item's shard's steps.
        await graph.retractions.settled('rm', body.id);
      });
      report("retraction of g0's best member", calls);
      for (const call of calls.filter((one: CountedFcall) => /retract/.test(one.name)))
        console.log(`  ${call.name} ${(call.ir / 1e6).toFixed(2)} M, ${commandsOf(call)}`);
    },
    { KEY_PREFIX: 'bgr:', REDIS_AUTO_PIPELINING: 'false' },
    ['--instr-atstart=no'],
  );
}
