import { Bounds } from '../../common/limits';

/** Largest |amount| of one increment or batch entry; an amount is also never zero. */
export const MAX_ABS_AMOUNT = 1_000_000;
export const AMOUNT_RANGE: Bounds = { min: -MAX_ABS_AMOUNT, max: MAX_ABS_AMOUNT };
/**
 * What the services take from a library caller, whom no DTO checks: integers the functions write as
 * decimal digits and add exactly (a slot's sum is a 64-bit integer, its results score a double).
 */
export const EXACT_AMOUNT_RANGE: Bounds = { min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };
export const DEFAULT_AMOUNT = 1;

/** Largest |score| a max / min / last board records: integers stay exact in a zset's double (2^53 > 10^15). */
export const MAX_ABS_SCORE = 1_000_000_000_000_000;
export const SCORE_RANGE: Bounds = { min: -MAX_ABS_SCORE, max: MAX_ABS_SCORE };

/**
 * Board configs one process keeps prepared (BoardCache), most recently used first: a board past it is
 * read again at its next call (one HGETALL). Bounds the process's memory whatever the number of boards
 * (a prepared board of a few windows holds a few KB).
 */
export const BOARD_CACHE_ENTRIES = 10_000;

/** Entries of one batch of increments. */
export const BATCH_ENTRIES: Bounds = { min: 1, max: 1000 };

/** Most item increments one coalesced script call applies (WRITE_COALESCE_MS): about 1 ms of Redis at most. */
export const MAX_COALESCED_INCREMENTS = 100;

/**
 * Script calls one read makes while its window still holds expired data, each draining one more
 * EXPIRE_CHUNK, before it answers 503 WINDOW_DRAINING: reads list nothing from outside their window,
 * and a read stays bounded (at the default chunk, 1 000 fields drained in calls of about 0.5 ms).
 */
export const MAX_READ_DRAIN_CALLS = 10;

/** Neighbours on each side of an item that `around` answers. */
export const RADIUS_ITEMS: Bounds = { min: 1, max: 100 };
export const DEFAULT_RADIUS_ITEMS = 5;

/** Rows of a top read when no limit is given (the bounds are the shared page limit's). */
export const DEFAULT_TOP_ITEMS = 10;

/** Windows of one board, and slots (period / interval) of one window. */
export const WINDOWS_PER_BOARD: Bounds = { min: 1, max: 8 };
export const MAX_SLOTS_PER_WINDOW = 10_000;
/**
 * Ids x shards one call of a sharded lookup on one node counts above (lookup_node: one ZCOUNT each at
 * most, 3 weighted units on `ties: first`): the calls run in parallel, one round, each a few
 * milliseconds at most (about 15 ms for 1 000 weighted counts under a loaded CI, so 500).
 */
export const LOOKUP_COUNTS_PER_CALL = 500;
/**
 * What a shard's own reads weigh in a call counting over several shards, in counts (count_above_shards:
 * shards.store shardCountWeight; lookup_node: its ids per call): its config's two HMGETs of some twenty
 * fields, and the Lua reading them. With
 * each window's slot check and count of listed items weighed too, a write's rank on 64 shards of 8
 * windows of `ties: first` goes in 5 calls of at most 13 shards (4 calls of 20 before, 680 commands
 * each, 6.3 ms at the harness's moderation), an item's rank over 63 shards in 2 calls (1 before).
 */
export const COUNT_SHARD_WEIGHT = 4;
/**
 * Weighted units (counts and shards' own reads, as LOOKUP_COUNTS_PER_CALL weighs them) one lookup_node
 * call of a single id takes at most: a lone id whose counts over every shard weigh more is counted in
 * parts, a call per part of the shards, a part that read another standing of the id than its own
 * shard's part counting again within the same part (issue #45; calls of several ids keep
 * LOOKUP_COUNTS_PER_CALL): one id over 64 shards of `ties: first` (448 units) was one call of
 * 11.6-17.0 M instructions on the worst-case harness's board of every option, about 5-8 ms.
 */
export const LOOKUP_NODE_UNITS_PER_CALL = 200;
/**
 * Other shards a write's rank drains before it counts them (count_above, a write call's drain each),
 * when their expired slots wait to drain (issue #45): the rest count as they stand and the write
 * answers draining, its ranks off by what remains until the scheduler or their next calls drain it. A
 * write's Redis time then stays within a few write calls' whatever the shards: draining every other
 * shard of a 64-shard board of 8 windows idle for hours was 63 calls, 72 k commands, 120-200 ms.
 */
export const WRITE_RANK_SHARD_DRAINS = 2;

/**
 * Counts one score_spread_shards call takes at most: SPREAD_SHARD_WEIGHT per shard it reads plus, per
 * shard, one per bound (or per item, when a shard holds no more items than bounds: its scores read once
 * and walked) and one per pick, and the picks' scores. A sharded distribution's rounds go in calls per
 * Redis node of at most this many, in parallel: a ZCOUNT from Lua costs about 13 K instructions, so a
 * call stays under about 5 M, where one call per shard paid about 0.4 M before its counts
 * (bench/fanout-call-instructions.ts).
 */
export const SPREAD_COUNTS_PER_CALL = 300;
/** What a shard's own reads weigh in a score_spread_shards call, in counts (config, due slots, listed, range: about 0.16 M). */
export const SPREAD_SHARD_WEIGHT = 12;

/**
 * Item x metric counts one metric_counts call reads (one ZMSCORE entry each, the count then in its
 * reply): a page's counts on a board of many metrics go in several calls of at most this many, each
 * about a millisecond of Redis (a page of 1 000 by 8 metrics in one call held Redis ~15 ms).
 */
export const METRIC_COUNTS_PER_CALL = 2_000;

/**
 * Ids one lookup call answers on a shard (lookup, lookup_node): each id is about four commands (its
 * score, rank (a count), tie mark, previous rank's count; the previous scores in one ZMSCORE), about
 * 0.09 M instructions of Redis with a moderated board's ranks placed by binary search. A call's fixed
 * cost (about 5.4 M on a one-shard `ties: first` board of 200 hidden items: the states, their scores now
 * and in the previous listing) is paid once per call: 100 ids were calls of 14.4 M instructions (5.4 ms
 * in the worst-case harness), 50 make calls of about 10 M (bench/lookup-instructions.ts), a 1 000-id
 * lookup 20 calls instead of 10, each charged to the read budget.
 */
export const LOOKUP_IDS_PER_CALL = 50;

/**
 * Rows one read call of a wilson or controversial view answers (each row three reply values: its item,
 * rank score and its two counts): a page of 1 000 in one call held Redis 5.8 ms, most of it the reply;
 * a longer page is read in calls of this many rows.
 */
export const COUNTED_VIEW_ROWS_PER_CALL = 250;

/** Counts of a lookup that spend one read of its client's read rate budget (READ_RATE_LIMIT_*). */
export const LOOKUP_COUNTS_PER_READ = 200;

/** Key groups a board's items spread over. */
export const SHARDS_PER_BOARD: Bounds = { min: 1, max: 64 };

/**
 * Deepest position (offset + limit) a top read of a sharded board reaches. The read is progressive
 * (shard-math mergeShardHeads): about this many rows plus a margin per shard in all, never more than
 * maxRowsRead (153 000 rows at 64 shards; docs/benchmarks.md has its Redis time).
 */
export const MAX_SHARDED_DEPTH_ITEMS = 10_000;

/** A board's maxItems: most items its windows may hold (per shard: ceil(maxItems / shards)). */
export const BOARD_MAX_ITEMS: Bounds = { min: 1, max: 100_000_000 };

/**
 * Snapshot rows one item-history script call may scan (it pages beyond: nextFrom). Tracing an item
 * scans each snapshot's rows (about 1.4 ms per 1 000 rows, measured): at 5 000 a call stays near 7 ms
 * whatever `keep` is, where one call through 1 000 snapshots of 1 000 rows took 1.4 s.
 */
export const HISTORY_ROWS_PER_CALL = 5000;

/**
 * Bytes of a kept snapshot's text one history_read call reads (a page of its whole rows: about 165 of
 * 25 bytes; the read pages on). GET would copy a whole text into Lua, which hashes every byte of a
 * string it makes, and answer every row: a shard's snapshot of 1 000 rows took 3.3 M instructions a call,
 * a page of 4 096 bytes takes 1.3 M, of 8 192 2.1 M (bench/history-shard-instructions.ts). More than any
 * row holds (an id of ID_LENGTH_CHARS and its fields).
 */
export const HISTORY_READ_BYTES_PER_CALL = 4096;
/**
 * Reads of kept listings in several calls begun afresh when one changed between two calls (its seam:
 * archive_lib's seam_of), then a 503: a window's snapshots over the shards, a one-shard archive page.
 */
export const PAGED_READ_ATTEMPTS = 3;

/**
 * Work one listing_counts or listing_counts_shards call takes at most (the `metrics` of archive rows, on
 * a sharded board over the shards one node serves): a listing read at one boundary of a shard weighs 8
 * units (its text and its record read), each item looked up or row counted ahead of in it one (a binary
 * search of the text). A shard's asks that weigh more go in pieces (listing-counts.ts askPieces): a page
 * of 10 000 rows of a one-shard board is 26 calls per other metric, not one of every row.
 */
export const LISTING_UNITS_PER_CALL = 400;
/** What a listing read at one boundary of a shard weighs in LISTING_UNITS_PER_CALL's units. */
export const LISTING_BOUNDARY_UNITS = 8;
/**
 * Shards one listing_counts_shards call reads at most, whatever their units: each shard's visit (its
 * config and window checked, its text and record read) cost ~0.55 M instructions at the worst-case
 * harness's full shapes (64 shards of 156-row periods), where 36 shards of a few rows each fit 400
 * units (a call of 27 M instructions, 10 ms at full size).
 */
export const LISTING_SHARDS_PER_CALL = 8;

/** Sharded boards' merged latest snapshots an instance keeps in memory (one per board window read). */
export const MAX_CACHED_PREVIOUS_LISTINGS = 1000;
/**
 * How long an instance answers previousRank from its cached merge before reading the shards again
 * (ms): a moderation change made on another instance shows within it (issue #49: every instance
 * within 1 s). Costs at most one read of each shard's latest snapshot per window read, per instance,
 * per this time.
 */
export const PREVIOUS_RANKS_FRESH_MS = 1000;

/** Ids of one lookup (POST /boards/:board/lookup). */
export const LOOKUP_ITEMS: Bounds = { min: 1, max: 1000 };

/**
 * Most slot fields one `?span=` read sums per shard (read_span.lua): each costs a step of Lua, and a
 * span over more is refused (SPAN_TOO_COSTLY) rather than holding Redis; see docs/benchmarks.md.
 */
export const SPAN_MAX_FIELDS = 4_000;

/**
 * A filtered read over a span (POST query, GET top?span with filters) keeps the span's sums between its
 * calls (span_stage.lua): each staging call sums at most this many slot fields (or actor contributions)
 * of a shard, so no call sums the whole span (bench/span-filter-instructions.ts). Lua's collector frees
 * earlier garbage in step with what a call allocates (its replies and tables, about as many as its
 * fields): a call of 450 landing in its sweep runs 10.6-10.9 M instructions, past ~10 M (issue #45).
 */
export const SPAN_STAGE_FIELDS_PER_CALL = 300;

/**
 * Most staged span reads one window of one board shard holds at once (their keys: at most
 * SPAN_STAGED_ENTRIES_PER_READ entries each): one more is a 503 SPAN_READS_BUSY until one ends.
 */
export const SPAN_STAGED_READS_PER_SHARD = 8;

/**
 * Most entries one staged span read holds at any of its calls: the copies of its span (at most
 * SPAN_MAX_FIELDS fields) and its sums of packed records on its first call, later its sums, its items'
 * actor counts and the contributions counted (each at most the span's slot fields or contributions), and
 * its state hash.
 */
export const SPAN_STAGED_ENTRIES_PER_READ = 2 * SPAN_MAX_FIELDS + 8;
/**
 * Most bytes the staged span reads of one window of one board shard hold at once, until they end or
 * lapse (SPAN_STAGE_TTL_MS): SPAN_STAGED_READS_PER_SHARD reads of SPAN_STAGED_ENTRIES_PER_READ entries,
 * 160 B an entry of ids up to 5 characters (a sorted set's member, the costliest; a longer id adds its
 * bytes). About 10 MB; harness/worst-case measures 8 reads of its costliest span (docs/security.md).
 */
export const SPAN_STAGED_BYTES_PER_SHARD = SPAN_STAGED_READS_PER_SHARD * SPAN_STAGED_ENTRIES_PER_READ * 160;

/**
 * How long a staged span lapses after (ms): a read drops it when it ends; this only clears what a
 * stopped instance left, and frees its place among SPAN_STAGED_READS_PER_SHARD.
 */
export const SPAN_STAGE_TTL_MS = 60_000;

/**
 * The budget of one drop step of a deleted board (board_drop_step.lua): each key it unlinks and each
 * window it looks into (DROP_WINDOW_LOOK: its reads and the names it tries) spend it. Slot hashes,
 * contributions and snapshots go by UNLINK (a big value is freed off the main thread, a small one on
 * it: about a key's lookup each way). A board of many small segments spends its steps on looks and
 * small keys: at 1 000 keys a step (charged no looks) a one-shard copy of the worst-case harness's
 * 64-shard board at full size (1 500 segments) ran ~515 commands and ~2 000 names a step, 12.6 ms at
 * ci size and 37.8 ms at full size in the harness; now ~75 commands and ~270 names.
 */
export const BOARD_DROP_KEYS_PER_CALL = 250;

/**
 * Entries of the groups maps and item data one prune step after a reset walks (prune_step.lua): the
 * reset only marks the maps, each step checks about this many entries against the windows (a ZMSCORE a
 * window) and forgets those none holds (the map, its reverse, the archived map's check, the options
 * following a group). At 200 a step, 100 000 items ran 5.9 M Redis instructions of its own (median),
 * 9.1 M at most (bench/reset-prune-instructions.ts; 400 entries ran up to 14.5 M), and 8.7 ms in the
 * worst-case harness at full size, where every entry's hash and zset nodes are far apart in memory
 * (the same steps at ci size: 1.1 ms): 100 a step. Item data is walked 50 entries a step at most
 * (item_data_lib's PRUNE_SCAN: each value up to 1 KB, read whole by HSCAN; at 100: 2.4 M median, 3.2
 * M at most, 5.5 ms at full size).
 */
export const PRUNE_ENTRIES_PER_CALL = 100;

/**
 * Prune steps (PRUNE_ENTRIES_PER_CALL entries each) one scheduler visit of a board drives on each of its
 * shards a reset left pruning (its PUT's instance stopped before the PUT's own steps ended them): the
 * rest is the next pass's, the board due again at once.
 */
export const PRUNE_STEPS_PER_VISIT = 100;

/**
 * Times a group's moderation change is sent while a reset's prune refuses it (TB_PRUNING), the prune run
 * to its end between them: a refusal again means another reset landed meanwhile each time.
 */
export const PRUNED_ATTEMPTS = 3;

/** Keys the DELETE request itself drops before it answers (the rest: in the background, in steps): 8 000. */
export const BOARD_DROP_KEYS_PER_REQUEST = 32 * BOARD_DROP_KEYS_PER_CALL;

/** Buckets of a distribution: each costs one count per shard (one ZCOUNT, O(log n)) in one call. */
export const DISTRIBUTION_BUCKETS: Bounds = { min: 1, max: 100 };
export const DEFAULT_DISTRIBUTION_BUCKETS = 10;

/**
 * Items with a moderation state (hidden or allowed) one shard holds: every read of the shard's
 * windows skips (or, on a review board, lists) them at one place each after one ZMSCORE (a page from
 * the top reads past them, no score read), so this bounds what moderation adds to a call
 * (harness/worst-case: the moderation rows). A new state beyond it is refused (429 QUOTA_EXCEEDED); an
 * unsharded board holds this many. The shard also keeps each item's state, its own or its group's, for
 * its reads (`<tag>:modeff`): at most these and MODERATED_GROUP_ITEMS_PER_SHARD's fields.
 */
export const MODERATED_ITEMS_PER_SHARD = 200;
/**
 * A moderation change of one item or one group on a one-shard board updates the exception positions
 * kept for its calendar archives' pages (snapshot_shown_lib's index_change_end: each period's by the
 * changed items' positions) in the change's own call: at most this many periods, newest first over the
 * board's calendar windows, and at most ARCHIVE_INDEX_ROWS_PER_CHANGE rows of work. The positions of
 * the periods past them are found again by the archive read that next needs them, as before any change.
 */
export const ARCHIVE_INDEX_PERIODS_PER_CHANGE = 16;
/**
 * The work bound of that update, in rows of a pass over a period (~0.3 µs of Redis each): a period's
 * text copied costs about a row per 190 bytes, each changed item's find a row per 630 bytes, so a
 * 10 000-row period ~1 000 rows for one item, and a change updates 4 such periods (~1.5 ms).
 */
export const ARCHIVE_INDEX_ROWS_PER_CHANGE = 5_000;
/**
 * Groups with a moderation state (PUT /admin/boards/:board/moderation/groups/:group) one board holds.
 * Every shard keeps the board's group states (a field each); a group state's set, and a board PUT,
 * reads each one's items in groups_lib's reverse map (one lex range per group state) into the states
 * the shard keeps for its reads, which a read asks in one HGETALL. Past it a new one is refused (409
 * MODERATED_GROUPS_FULL) until one is cleared.
 */
export const MODERATED_GROUPS_PER_BOARD = 100;
/**
 * Items the moderated groups of a board may hold on one shard when a group state is set: a page places
 * each one (as it places item states), a rank compares their scores in each window and view of the
 * call. Measured on the sum board of 8 windows and 8 views, ties first, 2 000 items, with 200 item
 * states (least of 15 runs, 2026-12-02, load 15): at 200 an existing item's increment 4.8 ms, top
 * limit 1 000 5.0 ms; at 1 000, 14 ms and 19 ms (harness/worst-case: the group moderation rows). A PUT that
 * would reach past it on some shard is refused before anything is stored (422 REQUEST_TOO_COSTLY).
 * Writes naming a moderated group for an item new to it still count and hide (or allow) it: they may
 * take a shard past this bound, which the next group PUT then refuses. Items no window holds any more
 * whose rows a calendar archive keeps (groups_lib's archived map) are not counted: live reads never
 * meet them; reads of kept listings leave them out too (moderation_history_lib), at most the archives'
 * own rows (keep x top per calendar window and shard), bounded when a state is set by
 * MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD.
 */
export const MODERATED_GROUP_ITEMS_PER_SHARD = 200;
/**
 * Items no window holds any more whose rows a calendar archive or a rolling window's snapshot (a
 * segment's too, each) keeps (groups_lib's archived map) the moderated groups of a board may hold on one
 * shard when a group state is set: every read of the
 * shard's kept listings (archive pages, history, previous ranks, a write's previous rank) reads them
 * (one lex range per moderated group) and leaves them out one by one, as many as it reads. Measured on
 * one shard, 2 periods of 10 000 rows, load 15-20, 2026-12-04: at 1 000 such items an archive page's
 * call 1.7 ms (median of a pass's calls; 6.9 ms at most), 2.4 ms with its positions kept, a write
 * answering its previous rank 1.8 ms, the group cleared 1.4 ms; at 10 000, 60-350 ms a call (past
 * WORST_CALL_MS): harness/worst-case, the archived group rows. A PUT that would reach past it on some
 * shard is refused (422 REQUEST_TOO_COSTLY, nothing stored); items of a moderated group leaving every
 * window later may take a shard past it, which the next group PUT then refuses.
 */
export const MODERATED_GROUP_ARCHIVED_ITEMS_PER_SHARD = 1_000;
/**
 * Actors of one board with a weight other than 1 (PUT /admin/boards/:board/actors/:actor), over all
 * its shards. Every shard keeps its own copy of each weight (a field of `<tag>:weights`: about 200 B
 * with a 128-character ASCII id, up to 600 B with a multi-byte one, kept until the weight goes back to
 * 1) and a re-weighting record for 7 days after its last step (about 600 B, and about 300 B more per
 * window holding contributions of the actor). So weights make Redis hold at most about 1.2 KB per actor
 * and shard besides the cursors: 1.2 MB on an unsharded board, 80 MB on a 64-shard one. A count, as
 * moderation states: weights are admin state, which no client's quota covers. Weights correct known
 * accounts (trusted curators, suspected bots), not a population; past the bound a new one is refused
 * (409 ACTOR_WEIGHTS_FULL) until some actor goes back to weight 1.
 */
export const WEIGHED_ACTORS_PER_BOARD = 1000;
/**
 * Aliases of one board (PUT /admin/boards/:board/aliases/:alias), kept for good: shard 0 holds the map
 * (alias -> canonical item, the merge's run id, a count per canonical item: about 400 B an alias with
 * 128-character ids), the alias's shard a merge record for 7 days (about 300 B, and a cursor per window
 * and segment window) and its block. At most about 1 MB per board; every instance caches the map of a
 * board it writes to (the same bytes). Admin state, counted as moderation states and weights are: past
 * the bound a new alias is refused (409 ALIASES_FULL).
 */
export const ALIASES_PER_BOARD = 1000;
/** Rows of a review queue page (GET /admin/boards/:board/moderation/queue?limit=). */
export const QUEUE_PAGE: Bounds = { min: 1, max: 100 };
export const DEFAULT_QUEUE_PAGE = 10;
/** How deep a review queue is read: cursor + limit at most (each shard reads that many rows). */
export const QUEUE_DEPTH_ITEMS = 1000;

/**
 * `?minActors=n` on top and POST .../query (a board with actors): only items with at least n distinct
 * actors in the window. A filtered read: its scan is bounded as perGroup's (groups.limits).
 */
export const MIN_ACTORS: Bounds = { min: 1, max: 1000 };

/**
 * Calls one archive read makes for its rows' `metrics` on a board of several metrics (per other metric:
 * a call per shard holding a row's item, and on a sharded board one per shard, each shard's asks in
 * pieces of at most LISTING_UNITS_PER_CALL units; about 0.8 ms each):
 * 8 metrics on up to 9 shards, 3 metrics on up to 32 (8 metrics on 64 shards: 896 calls, 750 ms of
 * Redis). A page past it and ARCHIVE_METRIC_UNITS_PER_READ is cut to its first rows that fit
 * (metric-counts.ts fittingPages; `nextOffset` for the rest).
 */
export const ARCHIVE_METRIC_CALLS_PER_READ = 128;
/**
 * Past ARCHIVE_METRIC_CALLS_PER_READ shard calls, an archive read on a sharded board still answers its
 * rows' `metrics` when their work is within this many LISTING_UNITS_PER_CALL units (every other
 * metric's, all shards): about 3.7 µs of Redis CPU a unit measured (the worst-case harness, 64 shards),
 * so about 20 ms a read. E.g. the last 2 rows of a period by one of 8 metrics on 64 shards: about 4 600;
 * one row of one period, what a cut page answers at least, about 4 100 there (the most of any board).
 */
export const ARCHIVE_METRIC_UNITS_PER_READ = 5000;
