/**
 * The worst-case row of a group heavier than a crossing call on one shard (issues #45/#48): on the
 * 64-shard member board a group holds at most 313 members a shard, so no part there is paged; over
 * wc-members-paged (PAGED_SHARDS shards) a group may hold its top 1 000 on one. Shard 0's part of the
 * group board's listing then records it a page a call (group_part_pages_lib), its staged keys
 * (<part>:hz, <part>:ht) telling those calls apart in the table.
 */
import { SNAPSHOT_KEEP, SNAPSHOT_TOP_ITEMS } from '../../src/ranking/options/snapshots/snapshots.limits';
import { GROUP_TOP_MEMBERS } from '../../src/ranking/options/group-of/group-of.limits';
import { shardOf } from '../../src/ranking/core/shard-math';
import { fillAll } from './fill';
import { scoreInOrder } from './group-rows';
import type { HarnessContext, WorstRow } from './harness-types';

/** Few shards, so a group's share of one (group-boards.store.ts's limitsOf) holds GROUP_TOP_MEMBERS.max. */
const PAGED_SHARDS = 4;
const MEMBERS = GROUP_TOP_MEMBERS.max;
/** Member rows a crossing call records of a group at most (snapshot_lib's 1 000 crossing rows, 2 a member). */
const PAGE_MEMBERS = 500;

export const PAGED_GROUP_BOARDS = {
  'wc-members-paged': {
    windows: [
      { name: 'm', period: '1h', interval: '1m', snapshots: { keep: SNAPSHOT_KEEP.max, top: SNAPSHOT_TOP_ITEMS.max } },
    ],
    shards: PAGED_SHARDS,
  },
  'wc-teams-paged': { groupOf: { board: 'wc-members-paged', window: 'm', top: MEMBERS, decay: 1 } },
} as const;

/** MEMBERS items of shard 0. */
function members(): string[] {
  const names: string[] = [];
  for (let k = 0; names.length < MEMBERS; k++) if (shardOf(`r-${k}`, PAGED_SHARDS) === 0) names.push(`r-${k}`);
  return names;
}

/** Group p0 of MEMBERS members, all on shard 0, each scored; then two minutes with no call. */
async function fillAndCross(context: HarnessContext): Promise<void> {
  const items = members();
  const join = (k: number) => ({ method: 'PUT' as const, path: `/boards/wc-teams-paged/members/p0/${items[k]}` });
  await fillAll(context, items.length, join, 'seeder');
  await scoreInOrder(context, 'wc-members-paged', items);
  await context.advanceSec(2 * 60);
}

export const PAGED_GROUP_ROWS: WorstRow[] = [
  {
    route: 'GET /boards/{board}/history',
    worst: `the group board's snapshot at the member window's boundary over a member board of ${PAGED_SHARDS} shards, one group of ${MEMBERS} scored members (top ${MEMBERS}) all on shard 0, dirty, then two minutes with no call: shard 0's part at the boundary it wrote before and its quiet part at the next, the group heavier than a crossing call in each, recorded over calls of at most ${PAGE_MEMBERS} of its members (the quiet part's members scored at its boundary first, as many a call)`,
    prepare: fillAndCross,
    request: () => ({ method: 'GET', path: '/boards/wc-teams-paged/history' }),
    times: 1,
    marks: { name: 'paged', key: /:part:\d+:h[zt]$/ },
    manyCalls: `shard 0's crossing records each part's group a page a call (staged apart, written whole by its last page), then the settle round merges the parts into the listings on shard 0, settles and reads`,
  },
];
