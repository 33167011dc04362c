import { DURATION_RULE } from '../../common/duration';
import { SPAN_MAX_FIELDS, SPAN_STAGE_TTL_MS, SPAN_STAGED_READS_PER_SHARD } from './ranking.limits';
import { SEGMENTS_PER_EVENT } from '../options/segments/segments.limits';

/** Every message the ranking feature answers with, written once. */
export const RANKING_MESSAGES = {
  boardNotFound: (board: string) => `board "${board}" does not exist`,
  windowNotFound: (board: string, window: string | undefined, known: string[]) =>
    `window "${window}" does not exist on board "${board}" (windows: ${known.join(', ')})`,
  boardConflict: (board: string, problems: string) => `board "${board}": ${problems}`,
  boardBeingDeleted: (board: string) =>
    `board "${board}" was deleted and its data is still being dropped: repeat the PUT in a moment`,
  configChanged: (board: string) => `board "${board}" changed during the request; retry`,
  boardIncomplete: (board: string) =>
    `board "${board}" has a shard without its config (a PUT in progress, or one that failed: repeat it)`,
  writeAppliedRankUnknown: (board: string) =>
    `board "${board}" changed during the request: the write was applied, but its board-wide rank could not be read; do not repeat the write, read the item instead`,
  batchPartial: (board: string, applied: number, total: number, pending: number) =>
    `board "${board}" changed during the request: ${applied} of ${total} entries applied, ${pending} not; retry those`,
  boardFull: (board: string, held: number, cap: number, shards: number, wanted: number) =>
    shards > 1
      ? `board "${board}" is full: the shard of this write holds ${held} of its ${cap} items (maxItems split over ${shards} shards) and the write would add ${wanted} new; existing items keep counting`
      : `board "${board}" is full: it holds ${held} of its maxItems ${cap} items and the write would add ${wanted} new; existing items keep counting`,
  moderatedItemsFull: (board: string, held: number, most: number) =>
    `board "${board}": the shard of this item holds ${held} moderated items (hidden or allowed) of its ${most}; clear some (DELETE .../moderation/items/:item) before setting new ones`,
  actorWeightsFull: (board: string, held: number, most: number) =>
    `board "${board}" holds ${held} weighed actors (weight other than 1) of its ${most}; set one back to weight 1 (PUT .../actors/:actor { "weight": 1 }) before weighing another`,
  aliasesFull: (board: string, most: number) =>
    `board "${board}" holds ${most} aliases, its most (an alias is kept for good)`,
  aliasConflict: (board: string, alias: string, item: string) =>
    `alias: "${alias}" of board "${board}" names another item already, or other aliases name it as their canonical item, or "${item}" is an alias of "${alias}" (no chains)`,
  aliasOfItself: (alias: string) => `item: an alias names another item, not itself ("${alias}")`,
  aliasNotFound: (board: string, alias: string) => `board "${board}" has no alias "${alias}"`,
  aliasOnBoard: (board: string) =>
    `alias: board "${board}" keeps scores (max, min or last); aliases merge the sums of a sum board`,
  moderatedGroupsFull: (board: string, most: number) =>
    `board "${board}" holds ${most} moderated groups (hidden or allowed), its most; clear one (DELETE .../moderation/groups/:group) before setting a new one`,
  moderatedGroupItemsTooMany: (board: string, items: number, most: number) =>
    `board "${board}": with this group state the moderated groups would hold ${items} items on one shard, past ${most} (each read skips them one by one); hide fewer groups or hide items one by one`,
  moderatedGroupArchivedTooMany: (board: string, items: number, most: number) =>
    `board "${board}": with this group state the moderated groups would hold ${items} archived items on one shard (items no window holds any more whose rows an archive keeps), past ${most} (each read of kept listings leaves them out one by one); hide fewer groups, or wait for their oldest archives to go`,
  groupModerationNeedsGroups: (board: string) =>
    `board "${board}" keeps no groups: group moderation needs "groups": true (PUT the board with it)`,
  queueNeedsReview: (board: string) =>
    `board "${board}" does not review items: every item is listed unless hidden (declare "moderation": { "review": true } to review)`,
  queueTooDeep: (depth: number, most: number) =>
    `cursor + limit reaches ${depth} rows into the review queue; it is read at most ${most} deep: allow or hide the items ahead first`,
  moderationReadsWindows: (board: string, view: string) =>
    `window: "${view}" is a view of board "${board}"; the review queue lists a window (name one of its windows)`,
  actorCountsPending:
    "minActors: this window's distinct-actor counts began after some of its live actor data (it was kept before the service counted them); read it without minActors, or reset the window (PUT the board with ?reset=true)",
  likeTakeBackPending:
    'an unlike of this like is still taking it out of the segments it was counted in (an instance stopped midway); send the like again: it finishes the take-back first',
  minActorsNeedsActors: (board: string) =>
    `minActors: board "${board}" keeps no actors (PUT the board with "actors": true); it counts distinct actors`,
  batchRefusedPartly: (board: string, applied: number, total: number, refused: number, reason: string) =>
    `board "${board}": ${applied} of ${total} entries applied, ${refused} not (${reason}); retry those`,
  windowCount: (min: number, max: number) => `windows must hold ${min} to ${max} windows`,
  notADuration: (field: string) => `${field} must be a duration (${DURATION_RULE})`,
  periodNotMultiple: (field: string) => `${field}.period must be a multiple of its interval`,
  tooManySlots: (field: string, slots: number, max: number) =>
    `${field} would have ${slots} slots; at most ${max} are allowed`,
  badWindowName: (field: string, rule: string) => `${field}.name must be ${rule}`,
  windowNameTwice: (field: string, name: string) => `${field}.name "${name}" is used twice`,
  keepsNoSnapshots: (board: string, window: string) =>
    `window "${window}" of board "${board}" keeps no snapshots (give it "snapshots": { "keep", "top" } in the board config)`,
  // A view is computed from its window on each read: there is nothing of it to keep, so point at the window.
  viewKeepsNoHistory: (board: string, view: string, window: string) =>
    `"${view}" of board "${board}" is a view: views keep no history (read the history of its window: ?window=${window})`,
  noSnapshot: (board: string, window: string, atSec: number | undefined) =>
    atSec === undefined
      ? `window "${window}" of board "${board}" has no snapshot yet (one is taken at each slot boundary)`
      : `window "${window}" of board "${board}" keeps no snapshot taken at or before ${atSec}`,
  historyRange: (fromSec: number, toSec: number) => `from (${fromSec}) must not be after to (${toSec})`,
  atInFuture: (field: string, skewSec: number, atSec: number, nowSec: number) =>
    `${field} must not be more than ${skewSec} s in the future (${field} ${atSec}, now ${nowSec})`,
  atTooOld: (field: string, oldestSec: number, atSec: number, nowSec: number) =>
    `${field} is older than every window's live span: the oldest accepted is ${oldestSec} (${field} ${atSec}, now ${nowSec})`,
  atBeforeWindows: "at lies before every window's live span, or before every window holding it was created",
  amountOutOfRange: (field: string, min: number, max: number) =>
    `${field} must be a non-zero integer from ${min} to ${max}`,
  batchKinds: (field: string) =>
    `${field} must carry a score on a max / min / last board and an amount elsewhere, not both: a batch is of one kind`,
  spanNeedsSum: (board: string, aggregate: string) =>
    `span sums the newest slots of a window: board "${board}" keeps the ${aggregate} score of each item (declare a window of that period instead)`,
  shardedAroundTooDeep: (maxDepth: number) =>
    `around on a view of a sharded board reaches rank ${maxDepth} at most (read deeper items with items/:item)`,
  windowDraining: (board: string, calls: number) =>
    `board "${board}": an expired slot of the window is still being drained after ${calls} drain calls; a read lists nothing from outside its window, retry in a moment`,
  shardedPageTooDeep: (maxDepth: number) =>
    `offset + limit must be at most ${maxDepth} on a sharded board (page deeper with /around)`,
  allTimeNeedsCap: (board: string, window: string) =>
    `board "${board}": the all-time window "${window}" keeps its items for good, so the board needs maxItems (the most items it holds)`,
  likeOnAllTime: (board: string, window: string) =>
    `board "${board}" takes no likes: a like is kept while a window holds it, and its all-time window "${window}" holds it for good (send increments instead)`,
  spanOnAllTime: (board: string, window: string) =>
    `span applies to rolling windows; "${window}" of board "${board}" is an all-time window (it has one slot, since the start)`,
  lookupReadsWindows: (board: string, view: string) =>
    `"${view}" is a view of board "${board}": a lookup reads windows (name one of the board's windows)`,
  lookupIdTwice: (item: string) => `items holds "${item}" twice`,
  lookupTooCostly: (ids: number, shards: number, counts: number, most: number, mostIds: number) =>
    `a lookup of ${ids} ids on this board of ${shards} shard(s) counts ${counts} ranks, more than the ${most} one request may: send at most ${mostIds} ids per request (or relative: true, which counts none on a "ties": "shared" board)`,
  spanNotInWindow: (board: string, window: string, spanSec: number, periodSec: number, intervalSec: number) =>
    `span ${spanSec}s does not fit window "${window}" of board "${board}": it must be a multiple of the window's interval (${intervalSec}s) and at most its period (${periodSec}s)`,
  spanOnCalendar: (board: string, window: string) =>
    `span applies to rolling windows; "${window}" of board "${board}" is a calendar window (it counts its current period)`,
  spanOnView: (board: string, view: string) =>
    `span applies to rolling windows; "${view}" is a view of board "${board}" (read the span's window instead)`,
  batchTooCostly: (board: string, cost: number, bound: number, entriesWithin: number) =>
    `the batch would weigh ${Math.ceil(cost)} cost units in one call on board "${board}", more than the ${bound} one write call may (WRITE_COST_PER_CALL: an entry weighs one unit per window and view, more with segments, an actor, a score, ties first or leagues): send at most ${entriesWithin} such entries per batch`,
  writeTooCostly: (board: string, cost: number, bound: number, segmentsWithin: number) =>
    `this write would weigh ${Math.ceil(cost)} cost units in one call on board "${board}", more than the ${bound} one write call may (WRITE_COST_PER_CALL; the board was declared past it, so its costliest writes are refused): ${segmentsWithin >= 0 ? `name at most ${segmentsWithin} segment(s) per write` : 'declare the board with fewer windows, views or options'}`,
  boardWriteTooCostly: (board: string, cost: number, bound: number) =>
    `one write of board "${board}" would weigh up to ${Math.ceil(cost)} cost units in one call (every window and view, and in each of the ${SEGMENTS_PER_EVENT.max} segments an event may name, with an actor when the board takes them), more than the ${bound} one write call may (WRITE_COST_PER_CALL): declare fewer windows, views, segments or options`,
  spanReadsBusy: (board: string, window: string) =>
    `window "${window}" of board "${board}" holds its most filtered span reads in progress (${SPAN_STAGED_READS_PER_SHARD} a shard): retry after Retry-After`,
  spanStagingLapsed: (board: string, window: string) =>
    `a filtered span read of window "${window}" of board "${board}" outlived its staged sums (${SPAN_STAGE_TTL_MS} ms): retry after Retry-After`,
  spanTooCostly: (
    board: string,
    window: string,
    spanSec: number,
    figures: { fields: number; shards: number; actors?: boolean },
  ) =>
    `span ${spanSec}s of window "${window}" on board "${board}" holds ${figures.fields} slot fields${figures.actors ? ' and actor contributions (minActors reads them all)' : ''}${figures.shards > 1 ? ` on one of its ${figures.shards} shards, more than the ${Math.floor(SPAN_MAX_FIELDS / figures.shards)} a shard may sum so that one read sums at most ${SPAN_MAX_FIELDS} over all shards` : `, more than the ${SPAN_MAX_FIELDS} one read sums`}: declare a window { "period": "${spanSec}s", "interval": ... } for it instead`,
  standingReadsWindows: (board: string, view: string) =>
    `"${view}" is a view of board "${board}": rank and distribution read windows (name one of the board's windows)`,
  tailPageTooDeep: (board: string, rows: number) =>
    `board "${board}" keeps a bounded tail: a page ends within its first ${rows} rows (offset + limit); ask the head, or read items one by one`,
  noTail: (board: string) => `board "${board}" declares no tail: its rows are exact without bounds (read top)`,
  noTiebreak: (board: string) =>
    `board "${board}" declares no tiebreak: a record is its score alone (send no tiebreak)`,
};
