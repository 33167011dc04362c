import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { ConflictError, NotFoundError } from '../../common/errors';
import { isRedisTimeoutError } from '../../common/redis-errors';
import { BoardCache } from '../boards/board-cache';
import { BoardsStore } from '../boards/boards.store';
import { GroupBoardsService } from '../group-boards/group-boards.service';
import { LeaguesService } from '../leagues/leagues.service';
import { PRUNE_STEPS_PER_VISIT } from '../core/ranking.limits';
import { WritesStore } from '../writes/writes.store';
import { ExpireReply } from './expiry.functions';
import { ExpiryStore } from './expiry.store';

/** Most expire calls one board gets per visit (each drains at most one chunk); still draining, it is due on the next pass. */
const MAX_EXPIRE_CALLS_PER_PASS = 100;

/** Registry names one sweep command reads or enters. */
const SWEEP_PAGE_BOARDS = 1000;

export interface DuePassOptions {
  /** How long a claimed board stays with this instance (SCHEDULER_LEASE_MS). */
  leaseMs: number;
  /** Most boards one claim takes (SCHEDULER_CLAIM_BATCH). */
  claimBatch: number;
}

export interface DuePassResult {
  /** Boards claimed and visited. */
  visited: number;
  failures: number;
  /** Boards left with expired data after MAX_EXPIRE_CALLS_PER_PASS calls: due again on the next pass. */
  stillDraining: number;
  /** Boards whose PUT was under way: due again on the next pass. */
  skipped: number;
  /**
   * Boards a call of which got no answer within REDIS_COMMAND_TIMEOUT_MS (a stalled host, a busy Redis):
   * due again on the next pass, not failures. The call may still have run, and an expire call is safe to
   * run again; /metrics counts the timeout itself (trendboard_redis_command_errors_total).
   */
  timedOut: number;
}

/** The expiry passes: due boards claimed and drained, and the sweep that heals the due index. */
@Injectable()
export class ExpiryService {
  private readonly logger = new Logger('Ranking');

  constructor(
    private readonly store: ExpiryStore,
    private readonly boards: BoardsStore,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
    private readonly leagues: LeaguesService,
    private readonly groups: GroupBoardsService,
    private readonly writes: WritesStore,
  ) {}

  /**
   * One scheduler pass: claims the boards whose due time has come (shared with other instances: a
   * board claimed here is not visited elsewhere until its lease lapses), expires each until nothing
   * expired remains (bounded per board), and puts it back into the index at its next due time. Claims
   * again while claims come back full, only what was due when the pass began: a board put back as due
   * again (still draining, a PUT under way, a failure) waits for the next pass instead of keeping this
   * one going. Idle boards cost nothing: they are not in the index.
   */
  async expireDue(options: DuePassOptions): Promise<DuePassResult> {
    const result: DuePassResult = { visited: 0, failures: 0, stillDraining: 0, skipped: 0, timedOut: 0 };
    const passMs = this.clock.nowMs();
    for (;;) {
      const claim = await this.store.claimDue(this.clock.nowMs(), options.leaseMs, options.claimBatch, passMs);
      const visited = new Map<string, number | null>();
      for (const name of claim.boards) visited.set(name, await this.visit(name, passMs + 1, result));
      await this.store.completeDue(claim.leaseEndMs, visited);
      result.visited += claim.boards.length;
      if (claim.boards.length < options.claimBatch) return result;
    }
  }

  /**
   * The safety net of the due index, taken by one instance per interval (fleet-wide): moves the
   * registry set kept before paging into the zset, then enters every registered board that has no due
   * entry (ZADD NX), spread evenly over the next interval so the visits it causes trickle instead of
   * arriving at once. A board with data whose index update was lost (its instance crashed between the
   * write and the update) is visited within two intervals; reads never wait for it (lazy expiry).
   * Answers the boards entered, or null when another instance has this interval's turn.
   */
  async sweepDueIndex(intervalMs: number): Promise<number | null> {
    const startMs = this.clock.nowMs();
    if (!(await this.store.takeSweepTurn(startMs, intervalMs))) return null;
    // Drops of deleted boards that no instance is running (one stopped half way) go on from here.
    await this.boards.drops.resume(startMs);
    const moved = await this.boards.migrateLegacyRegistry(SWEEP_PAGE_BOARDS);
    if (moved > 0) this.logger.log(`moved ${moved} board name(s) from the registry set into the registry zset`);
    const { total } = await this.boards.boardNamesPage({ offset: 0 }, 1);
    let entered = 0;
    let after = '';
    for (;;) {
      const names = await this.boards.registryPageAfter(after, SWEEP_PAGE_BOARDS);
      const spreadMs = (position: number) => Math.floor((position * intervalMs) / Math.max(total, 1));
      await this.store.enqueueIfAbsent(names.map((name, i) => [name, startMs + spreadMs(entered + i)]));
      entered += names.length;
      if (names.length < SWEEP_PAGE_BOARDS) return entered;
      after = names[names.length - 1];
    }
  }

  /**
   * Expires one claimed board (a group board: settles its groups): answers its next due time (unix ms; null: nothing left to expire), or
   * `againMs` when it must be visited again (still draining, a PUT under way, a call timed out, a failure).
   */
  private async visit(name: string, againMs: number, result: DuePassResult): Promise<number | null> {
    try {
      return await this.cache.withBoard(name, async (board) => {
        // A group board holds no data of its own: its visit settles its groups (GroupBoardsService).
        if (board.config.groupOf) {
          const settling = await this.groups.settleDue(board, againMs);
          if (!settling.settled) result.stillDraining++;
          return settling.dueMs;
        }
        const answered = new Map<string, ExpireReply>();
        for (let call = 0; call < MAX_EXPIRE_CALLS_PER_PASS; call++) {
          const expired = await this.store.expire(board, this.clock.nowMs(), answered);
          if (expired.draining) continue;
          if (!(await this.pruned(name, expired.pruningShards))) break;
          // A period that ended is the leagues' rollover's (exactly once, in bounded steps); a take-back
          // a stopped instance left, the sweep's (TAKE_BACK_CALLS_PER_VISIT unlike calls a visit).
          const rolled = await this.leagues.rollDue(board, this.clock.nowMs());
          if (rolled && (await this.writes.takeBacks.sweep(board, this.clock.nowMs()))) return expired.nextDueMs;
          result.stillDraining++;
          return againMs;
        }
        result.stillDraining++;
        return againMs;
      });
    } catch (error) {
      return this.visitFailed(name, error, againMs, result);
    }
  }

  /**
   * The prune a reset left on `shards` (its PUT's instance stopped half way, BoardsStore.prune), driven
   * up to PRUNE_STEPS_PER_VISIT steps a shard: whether it ended (else the board is due again at once).
   * Visits are claimed, and a step is safe to run twice, so two schedulers never prune apart.
   */
  private pruned(name: string, shards: number[]): Promise<boolean> {
    if (shards.length === 0) return Promise.resolve(true);
    return this.boards.prune({ name, shards, mostSteps: PRUNE_STEPS_PER_VISIT, nowMs: this.clock.nowMs() });
  }

  /** What a visit that threw answers (visit's): null for a board deleted meanwhile, else `againMs`. */
  private async visitFailed(
    name: string,
    error: unknown,
    againMs: number,
    result: DuePassResult,
  ): Promise<number | null> {
    if (error instanceof NotFoundError) {
      await this.boards.unregisterIfMissing(name);
      return null;
    }
    // A PUT of this board is under way (shards not synced yet): the next pass expires it.
    if (error instanceof ConflictError) {
      result.skipped++;
      return againMs;
    }
    if (isRedisTimeoutError(error)) {
      result.timedOut++;
      this.logger.debug(`expiring board "${name}" timed out: due again on the next pass`);
      return againMs;
    }
    result.failures++;
    this.logger.warn(`expiring board "${name}" failed: ${error instanceof Error ? error.message : String(error)}`);
    return againMs;
  }
}
