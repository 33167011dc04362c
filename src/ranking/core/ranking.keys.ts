/**
 * Key naming of the ranking feature. Every key starts with the configured prefix; the keys of one
 * board shard share one hash tag (`{...}`) so every script runs on one Redis Cluster slot. Names are
 * validated to contain no braces, so a name can never break out of its tag.
 *
 *   <prefix>boards:names                      zset  board names, score 0 (the registry, in name order)
 *   <prefix>boards                            set   the registry before it was a zset (moved by the sweep)
 *   {<prefix>due}:index                       zset  board name -> next due time (unix ms) of its shards
 *   {<prefix>due}:leases                      zset  board name -> when (unix ms) a scheduler's claim lapses
 *   {<prefix>due}:sweep                       string when (unix ms) the next sweep of the due index may start
 *   {<prefix>board:<board>[/<k>]}:cfg          hash  config (shard k > 0: a copy of shard 0's)
 *   {...}:dropcfg                             hash  the config of a deleted shard whose keys are being dropped
 *   {...}:likes                               zset  "<item>\x1f<user>" -> like time (ms)
 *   {...}:liketb                              hash  "<item>\x1f<user>" -> "<like time (ms)>,<segment>,...": the
 *                                             segments an unlike's take-back has left (likes_lib.lua)
 *   {...}:records                             zset  the admin records held on the shard (":ret:<id>", ":rw:<digest>",
 *                                             ":al:<digest>", ":alin:<digest>") -> when last held (ms): a
 *                                             board's drop unlinks them (actor_lib.lua)
 *   {...}:<window>:slots                      zset  live slot starts
 *   {...}:<window>:slot:<start>               hash  item -> amount in that slot
 *   {...}:<window>:top                        zset  item -> sum over the live slots
 *   {...}:<window>:snaps                      zset  snapshot boundaries (unix s), newest `keep` intervals
 *   {...}:<window>:snap:<at>                  string the listing at boundary <at> (snapshot_lib.lua)
 *   {...}:<window>:prev                       zset  item -> score in the latest snapshot (previousRank)
 *   {...}:<window>:arch                       hash  a calendar window's pending archives: closed slot
 *                                             start -> "<top> <keep> <rows written>" (archive_lib.lua)
 *   {...}:<window>:archrows:<start>           zset  the best `top` rows of a pending archive's slot so far
 *   {...}:<window>:archshown                  hash  archived period start -> the positions of its rows a
 *                                             moderated one-shard board leaves out now (archive_read.lua)
 *   {...}:<window>:archheld|archpend          zset  a `groups: true` board's items with a row in a kept
 *                                             (pending) archive of the window (archive_held_lib.lua)
 *   {...}:grouparch, {...}:bygrouparch        hash, zset  item -> group of items that left every window
 *                                             while an archive holds their rows, and by group (groups_lib.lua)
 *   {...}:histheld                            zset  a `groups: true` board's items with a row in a rolling
 *                                             snapshot (a segment's too) -> until when it may show (archive_held_lib.lua)
 *   {...}:segheld, {...}:segtext              zset, hash  a `groups: true` board's items with a row in a
 *                                             segment's calendar archive -> when (Redis' clock, ms) the last such
 *                                             expires, -> its text key (archive_held_lib.lua)
 *   {...}:grouplag, {...}:lagends             hash, zset  item -> group, -> until when: items that left every window
 *                                             while a segment may still snapshot or archive them (groups_lib.lua)
 *   {...}:<window>~<segment>:slots|slot:<start>|top  a segment's window: the same three keys, in the
 *                                             shard's tag (`~` is in no name, so never a board window's)
 *   {...}:<window>~<segment>:snaps|snap:<at>|prev|mark  a segment's history (snapshot_lib; mark: its
 *                                             slot mark, a string expiring keep + 1 intervals after its last run)
 *   {...}:<view>~<segment>:top|items|meta|next  a segment's view (segment_views_lib)
 *   {...}:segs                                zset  segment -> end (unix s) of its newest live slot
 *   {...}:segnames                            zset  segment -> 0: its names in byte order (segment_lib.lua:
 *                                             added with a slot, pruned by the listing once not live)
 *   {...}:segdue                              zset  segment -> when (unix ms) its oldest slot expires, or
 *                                             its next snapshot boundary while it holds data
 *   {...}:seghist                             zset  segment -> until when (unix s) it may hold history
 * The snapshot keys are derived inside the scripts from the slots key (same hash tag), like slot hashes.
 */
export class RankingKeys {
  constructor(readonly prefix: string) {}

  /**
   * Board names, all scored 0 so the zset is in byte order of name (stable pages: ZRANGE by rank or
   * BYLEX). A plain key, written on its own: it is never touched together with a board's keys.
   */
  boardRegistry(): string {
    return `${this.prefix}boards:names`;
  }

  /** The registry as it was before paging (a set): moved into boardRegistry by the scheduler's sweep. */
  legacyBoardRegistry(): string {
    return `${this.prefix}boards`;
  }

  /** The scheduler's due index (board -> next due time, ms), written by single-key commands and the due scripts. */
  dueIndex(): string {
    return `{${this.prefix}due}:index`;
  }

  /** Boards claimed by a scheduler pass (board -> when the claim lapses, ms): same tag as the index. */
  dueLeases(): string {
    return `{${this.prefix}due}:leases`;
  }

  /** Alias merges an instance starting up resumes (zset: "<board><US><alias>" -> start, ms), as re-weightings. */
  aliasesRunning(): string {
    return `${this.prefix}aliases:running`;
  }

  /** Re-weightings an instance starting up resumes (zset: "<board><US><actor>" -> start, ms), as retractions. */
  reweightsRunning(): string {
    return `${this.prefix}reweights:running`;
  }

  /**
   * Retractions started and not seen to their end (zset: "<board><US><id>" -> start time, ms), so an
   * instance starting up resumes those a stopped one left. Written on its own, by single-key commands.
   */
  retractionsRunning(): string {
    return `${this.prefix}retractions:running`;
  }

  /**
   * Deleted boards whose keys are still being dropped (zset: "<board><US><most shards><US><uuid>" ->
   * delete time, ms; board-drops.ts), resumed at start and at the scheduler's sweep. Written on its own.
   */
  boardsDropping(): string {
    return `${this.prefix}boards:dropping`;
  }

  /** When (unix ms) the next sweep of the registry into the due index may start (sweep_turn.lua). */
  dueSweep(): string {
    return `{${this.prefix}due}:sweep`;
  }

  /**
   * The keys of one shard of a board. Shard 0 (every unsharded board) is `{<prefix>board:<name>}`;
   * shard k > 0 is `{<prefix>board:<name>/k}`: `/` is not a name character, so no board's shard can
   * ever be another board.
   */
  board(board: string, shard = 0): BoardKeys {
    return new BoardKeys(shard === 0 ? `{${this.prefix}board:${board}}` : `{${this.prefix}board:${board}/${shard}}`);
  }
}

export class BoardKeys {
  /** `segment`: the keys of that segment's windows (cfg, likes and the segment indexes stay the shard's). */
  constructor(
    readonly tag: string,
    readonly segment?: string,
  ) {}

  /** The same shard's keys with each window read as the segment's (see segment_lib.lua). */
  inSegment(segment: string): BoardKeys {
    return new BoardKeys(this.tag, segment);
  }

  cfg(): string {
    return `${this.tag}:cfg`;
  }

  /** The config of a deleted shard whose keys are being dropped (board_delete renames cfg to it). */
  dropCfg(): string {
    return `${this.tag}:dropcfg`;
  }

  likes(): string {
    return `${this.tag}:likes`;
  }

  /** Take-backs an unlike left unfinished on this shard (derived in segment_growth_lib.lua too). */
  likeTakeBacks(): string {
    return `${this.tag}:liketb`;
  }

  /** Live segments of this shard: segment -> end (unix s) of its newest slot (derived in segment_lib.lua too). */
  segments(): string {
    return `${this.tag}:segs`;
  }

  /** A retraction's record on this shard (retract_step.lua): actor, state, events, amount, startedMs. */
  retraction(id: string): string {
    return `${this.tag}:ret:${id}`;
  }

  /** An actor's re-weighting on this shard (reweight_step.lua), by a digest of the actor: weight, state, events, cursors. */
  reweight(actorDigest: string): string {
    return `${this.tag}:rw:${actorDigest}`;
  }

  /** The board's alias map on shard 0 (alias_put.lua): alias -> canonical item. */
  aliases(): string {
    return `${this.tag}:aliases`;
  }

  /** The merges' run ids on shard 0 (alias_put.lua): alias -> run. */
  aliasRuns(): string {
    return `${this.tag}:aliasruns`;
  }

  /** An alias merge's record on the alias's shard (alias_step.lua), by a digest of the alias. */
  aliasMerge(aliasDigest: string): string {
    return `${this.tag}:al:${aliasDigest}`;
  }

  /** The seq of an alias merge's last chunk given on the canonical item's shard (alias_step.lua). */
  aliasGiven(aliasDigest: string): string {
    return `${this.tag}:alin:${aliasDigest}`;
  }

  /** The actors' weights on this shard (actor_caps_lib.lua): actor -> weight. */
  actorWeights(): string {
    return `${this.tag}:weights`;
  }

  slots(window: string): string {
    return `${this.base(window)}:slots`;
  }

  /** Also derived inside the scripts from `slots(window)` (sibling_key: "slots" -> "slot:<start>"). */
  slot(window: string, slotStartSec: number): string {
    return `${this.base(window)}:slot:${slotStartSec}`;
  }

  top(window: string): string {
    return `${this.base(window)}:top`;
  }

  /** What a window's keys are named after (`<window>` or `<window>~<segment>`): scripts that derive them take it. */
  windowKeyName(window: string): string {
    return this.segment === undefined ? window : `${window}~${this.segment}`;
  }

  private base(window: string): string {
    return `${this.tag}:${this.windowKeyName(window)}`;
  }
}
