/**
 * Key naming of the ranking feature. Every key starts with the configured prefix; the keys of one
 * board shard share one hash tag (`{...}`) so every script runs on one Redis Cluster slot. Names are
 * validated to contain no braces, so a name can never break out of its tag.
 *
 *   <prefix>boards                            set   board names (the registry)
 *   {<prefix>board:<board>[/<k>]}:cfg          hash  config (shard k > 0: a copy of shard 0's)
 *   {...}:likes                               zset  "<item>\x1f<user>" -> like time (ms)
 *   {...}:<window>:slots                      zset  live slot starts
 *   {...}:<window>:slot:<start>               hash  item -> amount in that slot
 *   {...}:<window>:top                        zset  item -> sum over the live slots
 */
export class RankingKeys {
  constructor(readonly prefix: string) {}

  /** Set of board names (a plain key, written on its own: it is never touched together with a board's keys). */
  boardRegistry(): string {
    return `${this.prefix}boards`;
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
  constructor(readonly tag: string) {}

  cfg(): string {
    return `${this.tag}:cfg`;
  }

  likes(): string {
    return `${this.tag}:likes`;
  }

  slots(window: string): string {
    return `${this.tag}:${window}:slots`;
  }

  /** Also derived inside the scripts from `slots(window)` (sibling_key: "slots" -> "slot:<start>"). */
  slot(window: string, slotStartSec: number): string {
    return `${this.tag}:${window}:slot:${slotStartSec}`;
  }

  top(window: string): string {
    return `${this.tag}:${window}:top`;
  }
}
