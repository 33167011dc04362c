import type { Bounds } from '../../../common/limits';

/** A group's score sums its `top` best members. */
export const GROUP_TOP_MEMBERS: Bounds = { min: 1, max: 1000 };

/**
 * Most groups of one group board, and members of one group and of the whole group board: what a client
 * makes Redis hold through member PUTs (each member an entry of the membership hash and of its group's
 * zset), counted against these bounds by group_member_set itself (429 QUOTA_EXCEEDED beyond, nothing changed).
 */
export const MAX_GROUPS_PER_BOARD = 1000;
export const MAX_MEMBERS_PER_GROUP = 10_000;
export const MAX_MEMBERS_PER_BOARD = 100_000;

/**
 * Most counted members the records of one group board's kept listings hold together (group_history_out_lib:
 * what an item retraction on the member board rewrites them from, 56-73 B a member, so at most ~146 MB). Each
 * listing's record takes at most its share, floor(this / (keep + 2)) members (keep: the member window's
 * kept snapshots or archives; a rolling window's records outlive their snapshot by one interval, and one
 * may be in progress), groups recorded best first until the next would pass it: the groups past it are
 * not recorded, and a retraction leaves their rows in that listing as they were. At keep 1 000 a listing
 * records 1 996 members: one full group of 1 000. Passed with each membership change (the call that
 * names the group board to its member board) and kept beside the group board's rule (<base>rcap): until
 * a membership change sets it, nothing is recorded. Over a sharded member board the shards' parts of
 * listings not merged yet (group_parts_lib: each shard's newest 4, each at most floor(this / (4 x shards))
 * members) hold at most as many again, and a part past its share keeps no listing at its boundary.
 */
export const MAX_RECORDED_MEMBERS_PER_BOARD = 2_000_000;

/** Group boards over the windows of one member board: each adds its hook's work to every member write. */
export const MAX_GROUP_BOARDS_PER_MEMBER = 8;

/**
 * Member rows one group_settle call reads to recompute dirty groups (at most `top` rows a group, one
 * ZREVRANGE each): one full group of 1 000 members a call (2 took 6.6 to 14 ms of Redis under a load
 * of 18-22 on 2 shared cores: bench/group-boards.ts, the worst-case rows). A read of a group board
 * settles first, up to MAX_READ_DRAIN_CALLS calls, then answers 503 WINDOW_DRAINING (the next reads
 * go on from where it stopped).
 */
export const GROUP_SETTLE_ROWS = 1_000;

/**
 * How often the scheduler settles a group board (its due time after each visit; a membership change
 * makes it due at once): member writes dirty its groups without a call of its own, so a board nobody
 * reads holds at most this long's dirty groups, and a read finds at most those to recompute.
 */
export const GROUP_SETTLE_PERIOD_MS = 5_000;

/** Most settling calls one scheduler visit of a group board makes (GROUP_SETTLE_ROWS each); the rest at the next pass. */
export const GROUP_SETTLE_CALLS_PER_VISIT = 100;

/**
 * Counted member rows one call of a sharded group board's history merge handles (group-history.ts):
 * a page of a shard's part read (group_history_parts) or of the merged listing's record written on
 * shard 0 (group_history_store), whole groups until the next would pass it, one group whatever its
 * size (GROUP_TOP_MEMBERS.max rows at most, so no smaller page would do). Sized by
 * bench/group-history-instructions.ts on 64 shards, shard 0 at its most members: one call reading a
 * part of 2 520 members took 29 M instructions and one storing a record of 3 504 rows 20 M (~11.5 k
 * and ~5.8 k a row), so a page of 1 000 stays within the ~10 M (~5 ms) a call: paged, the costliest
 * part read took 9.4 M and the costliest record page 8.0 M.
 */
export const GROUP_HISTORY_PAGE_ROWS = 1_000;
