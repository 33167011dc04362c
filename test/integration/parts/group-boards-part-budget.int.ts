import { FakeClock } from '../../../harness/clock';
import { useOwnServerRanking } from '../../../harness/ranking';
import { shardOf } from '../../../src/ranking/core/shard-math';
import { loggedCalls, logEveryCommand, stopLoggingEveryCommand, type LoggedCall } from '../../support/slowlog';

/**
 * A shard's crossing records its part of a group board's listing (group_parts_lib) within the call's
 * crossing rows (snapshot_lib's CROSSING.ROWS_PER_CALL, 1 000), each recorded member weighing 2 and
 * each group 1 more: a group is charged before it is recorded, so no call records past the bound (one
 * group larger than a whole call would go alone). Before, the bound was checked before each group, not
 * for its size: shard 0 recorded a second group of 300 members in a call with 399 rows left (1 202).
 * The part at the boundary the shard wrote before and its quiet parts at the three after it, counted
 * without a clock from the commands SLOWLOG logged.
 */
const T0 = Date.UTC(2026, 11, 5);
const SHARDS = 2;
const TOP = 300;
const GROUPS = 3;
/** Crossing rows one call may take (snapshot_lib's CROSSING.ROWS_PER_CALL). */
const CROSSING_ROWS = 1000;
/** Parts shard 0 records at the read: at the boundary it wrote before, and quiet at the three after. */
const PARTS = 4;

/** `TOP` members of group g, all on shard 0. */
function membersOf(group: number): string[] {
  const names: string[] = [];
  for (let k = 0; names.length < TOP; k++) if (shardOf(`p${group}-${k}`, SHARDS) === 0) names.push(`p${group}-${k}`);
  return names;
}

/** The arguments a SLOWLOG entry had (past 32 it logs 31 and "... (N more arguments)"). */
function argumentCount(args: string[]): number {
  const more = /^\.\.\. \((\d+) more arguments\)$/.exec(args[args.length - 1] ?? '');
  return more ? args.length - 1 + Number(more[1]) : args.length;
}

/** The members of each group a call recorded in a part: an HSET of the group's text and its items' fields. */
const recordedGroups = ({ commands }: LoggedCall): number[] =>
  commands
    .filter(
      ([name, key, field]) => name.toLowerCase() === 'hset' && key.includes(':part:') && field?.startsWith('g\x1f'),
    )
    .map((args) => (argumentCount(args) - 4) / 2);

describe('a shard’s part of a group board’s listing, recorded within the crossing rows of a call (single)', () => {
  const clock = new FakeClock(T0);
  const own = useOwnServerRanking(clock);

  it('charges each group before recording it: no call records more than its crossing rows', async () => {
    const { ranking, groupBoards, node } = own();
    const windows = [{ name: 'm', period: 3600, interval: 60, snapshots: { keep: 4, top: 10 } }];
    await ranking.putBoard({ name: 'pm', windows, shards: SHARDS });
    await ranking.putBoard({ name: 'pt', groupOf: { board: 'pm', window: 'm', top: TOP, decay: 1 } });
    for (let g = 0; g < GROUPS; g++) {
      const items = membersOf(g);
      for (let first = 0; first < items.length; first += 100)
        await Promise.all(
          items.slice(first, first + 100).map((item) => groupBoards.setMember({ name: 'pt', group: `g${g}`, item })),
        );
      await ranking.incrementBatch(
        'pm',
        items.map((item, k) => ({ item, amount: 1 + k + g })),
      );
    }
    await ranking.top('pt', undefined, 0, 10);
    clock.advanceMs(PARTS * 60_000);

    await logEveryCommand(node);
    const answer = await ranking.history('pt', undefined, undefined);
    const calls = await loggedCalls(node);
    await stopLoggingEveryCommand(node);

    const score = (g: number) => (TOP * (TOP + 1)) / 2 + g * TOP;
    expect(answer.items.map(({ item, score: s }) => ({ item, score: s }))).toEqual(
      [2, 1, 0].map((g) => ({ item: `g${g}`, score: score(g) })),
    );
    const recorded = calls.map(recordedGroups).filter((groups) => groups.length > 0);
    expect(recorded.flat()).toEqual(Array.from({ length: PARTS * GROUPS }, () => TOP));
    const weights = recorded.map((groups) => groups.reduce((sum, members) => sum + 2 * members + 1, 0));
    expect(Math.max(...weights)).toBeLessThanOrEqual(CROSSING_ROWS);
  });
});
