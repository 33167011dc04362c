import { ConflictError } from '../../common/errors';
import { RedisFunctions } from '../../redis/redis-functions';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import { stepStartSec } from '../../common/duration';
import { slotRule } from '../core/window-math';
import type { WritesFunctions } from './writes.functions';

/** Claims this process remembers (board and config version -> segment -> claimed until, unix s) before it forgets them all. */
const MAX_REMEMBERED = 10_000;

/**
 * segments.max per board on a sharded board: before a write naming segments runs on its shard, its
 * names are claimed in the board's registry on shard 0 (segment_claim.lua), which refuses (409
 * SEGMENT_LIMIT, nothing applied) a new segment past the bound over all shards. A claim lasts until the
 * end of the span the write's current slots keep its segments live (the latest slot start + period of
 * the board's windows), so a name claimed up to then needs no call: this process remembers its own
 * claims, keyed by config version (a board deleted or changed has a new one). Cost: one call on shard 0
 * per name set and slot boundary per instance; an unsharded board's own index is exact and asks none.
 */
export class SegmentClaims {
  private readonly claimed = new Map<string, Map<string, number>>();
  private remembered = 0;

  constructor(
    private readonly functions: RedisFunctions,
    private readonly fns: WritesFunctions['functions'],
  ) {}

  /** Claims `names` for a write at `nowMs` (nothing for an unsharded board or none named). */
  async claim(board: PreparedBoard, names: Iterable<string>, nowMs: number): Promise<void> {
    if (!board.sharded) return;
    const untilSec = claimUntilSec(board, nowMs);
    const boardKey = `${board.config.name}\n${board.config.version}`;
    const known = this.claimed.get(boardKey);
    const unclaimed = [...new Set(names)].filter((name) => (known?.get(name) ?? 0) < untilSec);
    if (unclaimed.length === 0) return;
    const call = { shard0: board.shards[0], nowSec: Math.floor(nowMs / 1000), untilSec, names: unclaimed };
    await guard(this.functions.call(this.fns.segmentClaim, { ...call, max: board.config.segmentsMax ?? 0 }));
    this.remember(boardKey, unclaimed, untilSec);
  }

  /** Claims `names` as `claim` does; answers its SEGMENT_LIMIT refusal instead of throwing it. */
  claimOrRefusal(board: PreparedBoard, names: string[], nowMs: number): Promise<ConflictError | undefined> {
    return this.claim(board, names, nowMs).then(
      () => undefined,
      (error: unknown) => {
        if (isSegmentLimit(error)) return error;
        throw error;
      },
    );
  }

  private remember(boardKey: string, names: string[], untilSec: number): void {
    if (this.remembered + names.length > MAX_REMEMBERED) {
      this.claimed.clear();
      this.remembered = 0;
    }
    const known = this.claimed.get(boardKey) ?? new Map<string, number>();
    this.claimed.set(boardKey, known);
    for (const name of names) {
      if (!known.has(name)) this.remembered++;
      known.set(name, untilSec);
    }
  }
}

/** The latest end of a live span a write at `nowMs` gives its segments: its windows' current slot start + period. */
function claimUntilSec(board: PreparedBoard, nowMs: number): number {
  const nowSec = Math.floor(nowMs / 1000);
  let untilSec = nowSec;
  for (const window of board.config.windows) {
    const { periodSec, intervalSec, originSec } = slotRule(window, nowMs);
    untilSec = Math.max(untilSec, originSec + stepStartSec(nowSec - originSec, intervalSec) + periodSec);
  }
  return untilSec;
}

export function isSegmentLimit(error: unknown): error is ConflictError {
  return error instanceof ConflictError && error.code === 'SEGMENT_LIMIT';
}
