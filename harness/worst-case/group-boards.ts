import { SHARDS_PER_BOARD } from '../../src/ranking/core/ranking.limits';
import { ARCHIVE_KEEP, ARCHIVE_TOP_ITEMS } from '../../src/ranking/options/calendar/calendar.limits';
import { GROUP_TOP_MEMBERS } from '../../src/ranking/options/group-of/group-of.limits';
import { SNAPSHOT_KEEP, SNAPSHOT_TOP_ITEMS } from '../../src/ranking/options/snapshots/snapshots.limits';
import { HISTORY_GROUPS_BOARD } from './history-group-rows';
import { PAGED_GROUP_BOARDS } from './paged-group-rows';
import { SEGMENT_GROUPS_BOARD } from './segment-archive-group-rows';

/** A member board's window keeping snapshots at their most: its group boards' listings are kept as long. */
const MEMBER_MINUTES = {
  name: 'm',
  period: '1h',
  interval: '1m',
  snapshots: { keep: SNAPSHOT_KEEP.max, top: SNAPSHOT_TOP_ITEMS.max },
};

/** The member boards and the group boards over them (boards.ts lists them in this order: members first). */
export const GROUP_BOARDS = {
  /** A member board, its windows keeping snapshots and archives at their most, so do its group boards (group-rows.ts). */
  'wc-members': {
    windows: [
      MEMBER_MINUTES,
      { name: 'd', calendar: 'day', archive: { keep: ARCHIVE_KEEP.max, top: ARCHIVE_TOP_ITEMS.max } },
    ],
  },
  'wc-teams': { groupOf: { board: 'wc-members', window: 'm', top: GROUP_TOP_MEMBERS.max, decay: 1 } },
  'wc-teams-day': { groupOf: { board: 'wc-members', window: 'd', top: GROUP_TOP_MEMBERS.max, decay: 1 } },
  /** The same group board over a member board of the most shards, its window wc-members' m (group-rows.ts fills both). */
  'wc-members-sharded': { windows: [MEMBER_MINUTES], shards: SHARDS_PER_BOARD.max },
  'wc-teams-sharded': {
    groupOf: { board: 'wc-members-sharded', window: 'm', top: GROUP_TOP_MEMBERS.max, decay: 1 },
  },
  /** A group of its top 1 000 on one shard, its parts paged (paged-group-rows.ts fills both). */
  ...PAGED_GROUP_BOARDS,
  /** A member board at its moderation maxima under a group board (group-moderation-rows.ts fills both). */
  'wc-modmembers': { windows: [{ name: 'm', period: '1h', interval: '1m' }], groups: true },
  'wc-modteams': { groupOf: { board: 'wc-modmembers', window: 'm', top: GROUP_TOP_MEMBERS.max, decay: 1 } },
  /** Group moderation over rolling snapshots (history-group-rows.ts seeds it). */
  'wc-histgroups': HISTORY_GROUPS_BOARD,
  /** Group moderation over a segment's calendar archives (segment-archive-group-rows.ts seeds it). */
  'wc-seggroups': SEGMENT_GROUPS_BOARD,
} as const;
