/**
 * Worst-case row of a group board's settle over a moderated member board: wc-modteams ranks groups of
 * wc-modmembers' items (top 1 000, decay 1), and wc-modmembers holds its moderation maxima — the most
 * hidden items a shard may (MODERATED_ITEMS_PER_SHARD) and the most hidden groups holding the most items
 * (MODERATED_GROUPS_PER_BOARD, MODERATED_GROUP_ITEMS_PER_SHARD) — all of them members of the group
 * board's groups, each group's best: recomputing a group reads its hidden members before its `top`
 * counted ones (group_members_lib's best_rows), the most rows a group's recompute reads.
 */
import {
  MODERATED_GROUP_ITEMS_PER_SHARD,
  MODERATED_GROUPS_PER_BOARD,
  MODERATED_ITEMS_PER_SHARD,
} from '../../src/ranking/core/ranking.limits';
import { GROUP_SETTLE_ROWS, GROUP_TOP_MEMBERS } from '../../src/ranking/options/group-of/group-of.limits';
import { fillAll } from './fill';
import type { HarnessContext, HttpRequest, WorstRow } from './harness-types';

/** The group board's groups: one more than a settle call recomputes, as group-rows.ts's. */
const GROUPS = Math.ceil(GROUP_SETTLE_ROWS / GROUP_TOP_MEMBERS.max) + 1;
const HIDDEN_ITEMS_EACH = MODERATED_ITEMS_PER_SHARD / GROUPS;
const HIDDEN_GROUP_ITEMS_EACH = MODERATED_GROUP_ITEMS_PER_SHARD / GROUPS;
/** Each group: its hidden members, then its `top` counted ones. */
const MEMBERS = GROUP_TOP_MEMBERS.max + HIDDEN_ITEMS_EACH + HIDDEN_GROUP_ITEMS_EACH;
const BATCH = 1000;

const memberOf = (g: number, k: number) => `mm${g}-${k}`;
const increments = (items: object[]): HttpRequest => ({
  method: 'POST',
  path: '/boards/wc-modmembers/increments',
  body: { items },
});

/**
 * Every group full and scored (member k scores 1 + k: the last ones best); each group's best
 * HIDDEN_ITEMS_EACH hidden, the next HIDDEN_GROUP_ITEMS_EACH in the member board's item groups h0 …
 * (MODERATED_GROUPS_PER_BOARD of them, every one hidden).
 */
async function fillModeratedGroups(context: HarnessContext): Promise<void> {
  for (let g = 0; g < GROUPS; g++) {
    await fillAll(
      context,
      MEMBERS,
      (k) => ({ method: 'PUT', path: `/boards/wc-modteams/members/t${g}/${memberOf(g, k)}` }),
      'seeder',
    );
    const items = Array.from({ length: MEMBERS }, (_, k) => {
      const grouped = MEMBERS - HIDDEN_ITEMS_EACH - 1 - k;
      const group =
        grouped >= 0 && grouped < HIDDEN_GROUP_ITEMS_EACH
          ? `h${(g * HIDDEN_GROUP_ITEMS_EACH + grouped) % MODERATED_GROUPS_PER_BOARD}`
          : undefined;
      return { item: memberOf(g, k), amount: 1 + k, ...(group === undefined ? {} : { group }) };
    });
    for (let first = 0; first < items.length; first += BATCH)
      await context.send(increments(items.slice(first, first + BATCH)), 'seeder');
    await fillAll(
      context,
      HIDDEN_ITEMS_EACH,
      (k) => ({
        method: 'PUT',
        path: `/admin/boards/wc-modmembers/moderation/items/${memberOf(g, MEMBERS - HIDDEN_ITEMS_EACH + k)}`,
        body: { state: 'hidden' },
      }),
      'admin',
    );
  }
  await fillAll(
    context,
    MODERATED_GROUPS_PER_BOARD,
    (h) => ({ method: 'PUT', path: `/admin/boards/wc-modmembers/moderation/groups/h${h}`, body: { state: 'hidden' } }),
    'admin',
  );
}

/** One write to a member of every group: each group dirty. */
async function dirtyEveryGroup(context: HarnessContext): Promise<void> {
  const items = Array.from({ length: GROUPS }, (_, g) => ({ item: memberOf(g, 0), amount: 1 }));
  await context.send(increments(items), 'seeder');
}

export const GROUP_MODERATION_ROWS: WorstRow[] = [
  {
    route: 'GET /boards/{board}/top',
    worst: `limit 1 000 of a group board over a member board at its moderation maxima (${MODERATED_ITEMS_PER_SHARD} hidden items, ${MODERATED_GROUPS_PER_BOARD} hidden groups of ${MODERATED_GROUP_ITEMS_PER_SHARD} items, all members), ${GROUPS} groups of ${MEMBERS} scored members (top ${GROUP_TOP_MEMBERS.max}), their hidden members their best, every group dirty: each group's recompute reads ${MEMBERS} member rows`,
    prepare: async (context) => {
      await fillModeratedGroups(context);
      await dirtyEveryGroup(context);
    },
    request: () => ({ method: 'GET', path: '/boards/wc-modteams/top?limit=1000' }),
    settle: dirtyEveryGroup,
    manyCalls: `a read settles dirty groups in calls of at most ${GROUP_SETTLE_ROWS} member rows read (a group's recompute past its hidden members, up to MAX_READ_DRAIN_CALLS) before it reads`,
  },
];
