import { Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { WriteAnswer } from '../common/retry-safe';
import { IdemRequest, idemRequest } from '../redis/idempotency';
import { ConflictError, InvalidInputError, NotFoundError, WindowDrainingError } from '../common/errors';
import { ClientBudget, growthErrorOf, Reservation, reserveGrowth, UNLIMITED } from '../governance/growth-quotas';
import { ONE_ANSWER, withAnswerBudget } from '../governance/answer-budget';
import { CapRefusal, growthRefusalOf } from '../redis/refusals';
import { BoardConfig, PreparedBoard } from './board';
import { BoardCache, isRefusal } from './board-cache';
import { RANKING_MESSAGES as M } from './ranking.messages';
import {
  AtOutOfSpanError,
  BatchEntry,
  HistoryPoint,
  ListedItem,
  RankedRow,
  RankingStore,
  SnapshotListing,
  Standing,
  ViewListing,
  WindowStanding,
} from './ranking.store';
import { MAX_FUTURE_SKEW_SEC } from '../common/limits';
import { MAX_READ_DRAIN_CALLS, MAX_SHARDED_DEPTH_ITEMS } from './ranking.limits';
import { groupByShard } from './shard-math';
import {
  decayedValue,
  resolveViews,
  risingOf,
  risingPhase,
  RisingPhase,
  ViewConfig,
  ViewInput,
  ViewMode,
  ViewView,
  viewViewOf,
} from './trending-math';
import {
  atProblem,
  eventTimeMs,
  resolveWindows,
  SnapshotSpec,
  WindowConfig,
  WindowInput,
  WindowSpec,
  windowSpan,
} from './window-math';

/** A batch entry as the client sent it: `at` (absent: now) and `createdAt` (absent: none) in unix seconds. */
export interface BatchInput {
  item: string;
  amount: number;
  at?: number;
  createdAt?: number;
}

export interface BoardView {
  name: string;
  shards: number;
  windows: Array<{ name: string; period: number; interval: number; snapshots?: SnapshotSpec }>;
  /** Present when the board has a cap. */
  maxItems?: number;
  /** Present when the board has views. */
  views?: ViewView[];
}

/** What an item write answers: each window's new standing. */
export interface ItemWritten {
  board: string;
  item: string;
  windows: Record<string, WindowStanding>;
  /** True while an expired slot larger than one chunk is still being subtracted. */
  draining: boolean;
}

/** A view row as answered: rising rows add their figures. */
/** A view's row: views keep no snapshots, so previousRank is always null. */
export interface ViewRowAnswer extends RankedRow {
  observed?: number;
  expected?: number;
  phase?: RisingPhase;
  since?: number;
}

export interface WindowFigures {
  board: string;
  window: string;
  /** Start of the oldest live slot and end of the current one (unix s): the span the figures cover. */
  from: number;
  to: number;
  /** True while an expired slot larger than one chunk is still being subtracted. */
  draining: boolean;
  /** A view's mode (absent for a window). */
  mode?: ViewMode;
}

/** Most expire calls one board gets per visit (each drains at most one chunk); still draining, it is due on the next pass. */
const MAX_EXPIRE_CALLS_PER_PASS = 100;

/** Registry names one sweep command reads or enters. */
const SWEEP_PAGE_BOARDS = 1000;

/** A page of GET /boards: from `offset`, or after the name `cursor` when given. */
export interface BoardPage {
  limit: number;
  offset: number;
  cursor?: string;
}

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
}

/** The ranking use cases: boards, increments, likes, reads and the expiry pass (configs come from BoardCache). */
@Injectable()
export class RankingService {
  private readonly logger = new Logger('Ranking');

  constructor(
    private readonly store: RankingStore,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
  ) {}

  /** `shards`, `maxItems` and `views` undefined keep the stored ones. */
  async putBoard(
    name: string,
    windows: WindowInput[],
    shards?: number,
    reset = false,
    maxItems?: number,
    views?: ViewInput[],
  ): Promise<{ created: boolean; board: BoardView }> {
    const specs = resolveWindows(windows);
    const resolvedViews = views === undefined ? await this.keptViews(name, specs) : resolveViews(views, specs);
    const result = await this.store.putBoard(
      name,
      specs,
      shards,
      maxItems,
      resolvedViews,
      reset,
      randomUUID(),
      this.clock.nowMs(),
    );
    if (result.status === 'conflict')
      throw new ConflictError('BOARD_CONFIG_CONFLICT', M.boardConflict(name, result.message));
    this.cache.remember(result.config);
    return { created: result.status === 'created', board: viewOf(result.config) };
  }

  /** The stored views, checked again against the new windows (a PUT without `views` keeps them). */
  private async keptViews(name: string, windows: WindowSpec[]): Promise<ViewConfig[]> {
    const stored = (await this.store.loadBoard(name))?.views ?? [];
    try {
      return resolveViews(stored.map(viewViewOf), windows);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      throw new ConflictError('BOARD_CONFIG_CONFLICT', M.boardConflict(name, M.keptViewsBroken(error.message)));
    }
  }

  async getBoard(name: string): Promise<BoardView> {
    return viewOf((await this.cache.reload(name)).config);
  }

  /**
   * One page of boards in byte order of name: from `offset`, or after the name `cursor` (stable while
   * boards come and go). Only the page's configs are read. `total` counts registered names, which may
   * for a moment include a board whose PUT or DELETE is under way (such a name is not listed);
   * `nextCursor` is the last name of a full page, null at the end.
   */
  async listBoards(page: BoardPage): Promise<{ boards: BoardView[]; total: number; nextCursor: string | null }> {
    const from = page.cursor === undefined ? { offset: page.offset } : { after: page.cursor };
    const { names, total } = await this.store.boardNamesPage(from, page.limit);
    const configs = await this.store.loadBoards(names);
    return {
      boards: configs.filter((config) => config !== undefined).map(viewOf),
      total,
      nextCursor: names.length === page.limit ? names[names.length - 1] : null,
    };
  }

  async deleteBoard(name: string): Promise<void> {
    const existed = await this.store.deleteBoard(name, this.clock.nowMs());
    this.cache.forget(name);
    if (!existed) throw new NotFoundError('BOARD_NOT_FOUND', M.boardNotFound(name));
  }

  /** `budget`: the client's quotas on growth (none: the write may create anything). */
  async increment(
    name: string,
    item: string,
    amount: number,
    idemKey?: string,
    budget?: ClientBudget,
    atSec?: number,
    createdAtSec?: number,
  ): Promise<WriteAnswer<ItemWritten>> {
    // `at` and `createdAt` are part of the request only when sent: requests without keep their fingerprint.
    const keyed = idemRequest(idemKey, ['increment', name, item, amount, ...timeOf(atSec), ...createdOf(createdAtSec)]);
    return this.cache.withBoard(name, (board) =>
      this.ledgered(board, keyed, budget, 1, async (idem) => {
        const nowMs = this.clock.nowMs();
        const problem = checkAt('at', atSec, nowMs, board, idem !== undefined);
        checkCreatedAt('createdAt', createdAtSec, nowMs);
        const reservation = reserveGrowth(budget, { items: 1 });
        try {
          const result = await this.store.increment(
            board,
            nowMs,
            item,
            amount,
            reservation.allowance('items'),
            idem,
            eventTimeMs(atSec, nowMs),
            createdAtSec === undefined ? undefined : eventTimeMs(createdAtSec, nowMs),
          );
          reservation.settle({ items: result.createdItems });
          return {
            replayed: result.replayed,
            body: { board: name, item, windows: byWindow(result), draining: result.draining },
          };
        } catch (error) {
          throw atRefusal(error, problem) ?? this.growthError(error, reservation, board);
        }
      }),
    );
  }

  /**
   * On a sharded board the shards apply their entries independently: when some shard refuses because
   * the config changed, only its entries are retried (regrouped by the reloaded config), once. A part
   * that would create more new items than the board's cap or the client's quota allows is refused
   * whole (nothing of it applied): 409 BOARD_FULL / 429 QUOTA_EXCEEDED when nothing was applied, else
   * 409 BATCH_PARTIAL naming the reason.
   */
  async incrementBatch(
    name: string,
    inputs: BatchInput[],
    idemKey?: string,
    budget?: ClientBudget,
  ): Promise<WriteAnswer<{ board: string; count: number; draining: boolean }>> {
    const keyed = idemRequest(idemKey, [
      'increments',
      name,
      inputs.map((e) => [e.item, e.amount, ...timeOf(e.at), ...createdOf(e.createdAt)]),
    ]);
    // The request's time is when it arrived, whatever loading the config costs.
    const nowMs = this.clock.nowMs();
    const board = await this.cache.get(name);
    const shardsTouched = new Set(inputs.map((input) => board.shardOf(input.item))).size;
    return this.ledgered(board, keyed, budget, shardsTouched, (idem) => {
      // A keyed batch on one shard is checked by its script, after its replay (an old `at` still replays).
      const keyedOnOneShard = idem !== undefined && !board.sharded;
      const entries = inputs.map((input, i): BatchEntry => {
        checkAt(`items.${i}.at`, input.at, nowMs, board, keyedOnOneShard);
        checkCreatedAt(`items.${i}.createdAt`, input.createdAt, nowMs);
        return {
          item: input.item,
          amount: input.amount,
          atMs: eventTimeMs(input.at, nowMs),
          ...(input.createdAt === undefined ? {} : { createdMs: eventTimeMs(input.createdAt, nowMs) }),
        };
      });
      return this.applyBatch(name, entries, nowMs, idem, budget).catch((error: unknown) => {
        const entry = error instanceof AtOutOfSpanError ? Number(/ (\d+)$/.exec(error.message)?.[1] ?? 1) - 1 : -1;
        if (entry < 0) throw error;
        const field = `items.${entry}.at`;
        throw atRefusal(error, atProblem(field, inputs[entry].at ?? nowMs / 1000, nowMs, board.config.windows));
      });
    });
  }

  private async applyBatch(
    name: string,
    entries: BatchEntry[],
    nowMs: number,
    idem: IdemRequest | undefined,
    budget: ClientBudget | undefined,
  ): Promise<WriteAnswer<{ board: string; count: number; draining: boolean }>> {
    let pending = entries;
    let applied = 0;
    let draining = false;
    let replayed = true;
    for (let attempt = 0; attempt < 2; attempt++) {
      const board = attempt === 0 ? await this.cache.get(name) : await this.cache.reload(name);
      const groups = groupByShard(pending, board.shards.length);
      const reservation = reserveGrowth(budget, { items: distinctItems(pending) });
      const outcome = await this.store
        .incrementBatch(board, nowMs, groups, allowancesOf(groups, reservation.allowance('items')), idem)
        .catch((error: unknown) => {
          reservation.settle();
          throw error;
        });
      reservation.settle({ items: outcome.createdItems });
      applied += outcome.applied;
      draining ||= outcome.draining;
      replayed &&= outcome.replayed;
      if (outcome.refused.length === 0) return { replayed, body: { board: name, count: applied, draining } };
      const outOfSpan = outcome.errors.find((error) => error instanceof AtOutOfSpanError);
      if (outOfSpan !== undefined && applied === 0) throw outOfSpan;
      const unexpected = outcome.errors.find((error) => !isRefusal(error) && !growthRefusalOf(error));
      if (unexpected !== undefined) throw unexpected;
      const growth = outcome.errors.find((error) => growthRefusalOf(error));
      if (growth !== undefined) {
        const refusal = this.growthError(growth, reservation, board);
        if (applied === 0) throw refusal;
        throw new ConflictError(
          'BATCH_PARTIAL',
          M.batchRefusedPartly(name, applied, entries.length, outcome.refused.length, (refusal as Error).message),
        );
      }
      pending = outcome.refused;
    }
    if (applied > 0)
      throw new ConflictError('BATCH_PARTIAL', M.batchPartial(name, applied, entries.length, pending.length));
    if (!(await this.store.loadBoard(name))) throw new NotFoundError('BOARD_NOT_FOUND', M.boardNotFound(name));
    throw new ConflictError('CONFIG_CHANGED', M.configChanged(name));
  }

  /** Likes (undo = false) or takes a like back (undo = true: never refused, it creates nothing). */
  async like(
    name: string,
    item: string,
    userId: string,
    undo: boolean,
    idemKey?: string,
    budget?: ClientBudget,
    atSec?: number,
  ): Promise<WriteAnswer<ItemWritten & { userId: string; counted: boolean }>> {
    const keyed = idemRequest(idemKey, [undo ? 'unlike' : 'like', name, item, userId, ...timeOf(atSec)]);
    return this.cache.withBoard(name, (board) =>
      this.ledgered(board, keyed, budget, 1, async (idem) => {
        const nowMs = this.clock.nowMs();
        const problem = checkAt('at', atSec, nowMs, board, idem !== undefined);
        const reservation = reserveGrowth(budget, undo ? {} : { items: 1, likeUsers: 1 });
        const growth = { newItems: reservation.allowance('items'), newLikes: reservation.allowance('likeUsers') };
        const result = await this.store
          .like(board, nowMs, item, userId, undo, growth, idem, eventTimeMs(atSec, nowMs))
          .catch((error: unknown) => {
            throw atRefusal(error, problem) ?? this.growthError(error, reservation, board);
          });
        reservation.settle({ items: result.createdItems, likeUsers: result.createdLikes });
        return {
          replayed: result.replayed,
          body: {
            board: name,
            item,
            userId,
            counted: result.counted,
            windows: byWindow(result),
            draining: result.draining,
          },
        };
      }),
    );
  }

  /**
   * A keyed write on a sharded board goes through its ledger entry (request_claim.lua) on the shard its
   * key hashes to: a repeat of an answered request gets the stored body byte for byte (board-wide rank
   * included) and touches no shard, and the key used again for another request is refused (422)
   * whichever shards that request touches. Each shard's part stays retry-safe on its own, so a request
   * claimed but never answered (a failure half way) is simply applied again. An unsharded board needs
   * none of this: its one script call stores the whole answer.
   * Every answer stored counts against the client's quota of them (withAnswerBudget): one on an unsharded
   * board; on a sharded one the ledger entry and one per shard part (`parts`), all charged when the write
   * fails (the claim, and maybe some parts, were stored).
   */
  private ledgered<T>(
    board: PreparedBoard,
    keyed: IdemRequest | undefined,
    budget: ClientBudget | undefined,
    parts: number,
    write: (idem: IdemRequest | undefined) => Promise<WriteAnswer<T>>,
  ): Promise<WriteAnswer<T>> {
    if (!board.sharded) return withAnswerBudget(budget, keyed, ONE_ANSWER, write);
    const cost = { answers: 1 + parts, chargedOnError: 1 + parts };
    return withAnswerBudget(budget, keyed, cost, (idem) => this.throughLedger(board, idem, write));
  }

  private async throughLedger<T>(
    board: PreparedBoard,
    idem: IdemRequest | undefined,
    write: (idem: IdemRequest | undefined) => Promise<WriteAnswer<T>>,
  ): Promise<WriteAnswer<T>> {
    if (idem === undefined) return write(idem);
    const nowMs = this.clock.nowMs();
    const entry = await this.store.claimRequest(board, idem, nowMs);
    if (entry.state === 'answered') return { replayed: true, body: JSON.parse(entry.body) as T };
    const answer = await write(idem);
    // Lost, the stored answer only costs a repeat its byte-for-byte rank: the parts replay on their shards.
    await this.store
      .completeRequest(board, idem, nowMs, JSON.stringify(answer.body))
      .catch((error: unknown) => this.logger.warn(`storing the answer of a sharded request failed: ${String(error)}`));
    return answer;
  }

  async top(
    name: string,
    windowName: string | undefined,
    offset: number,
    limit: number,
  ): Promise<WindowFigures & { items: ViewRowAnswer[] }> {
    const checkDepth = (board: PreparedBoard) => {
      // Every shard sends its head down to offset + limit: bounded, so one request cannot make them all send millions of rows.
      if (board.sharded && offset + limit > MAX_SHARDED_DEPTH_ITEMS) {
        throw new InvalidInputError(M.shardedPageTooDeep(MAX_SHARDED_DEPTH_ITEMS));
      }
    };
    return this.withWindow(
      name,
      windowName,
      async (board, window, nowMs) => {
        checkDepth(board);
        const result = await this.store.top(board, window, nowMs, offset, limit);
        return { ...figures(name, window, nowMs, result.draining), items: result.items };
      },
      async (board, view, nowMs) => {
        checkDepth(board);
        const listing = await this.store.viewTop(board, view, nowMs, offset, limit);
        return {
          ...viewFigures(name, board, view, nowMs, listing.draining),
          items: viewRows(board, view, listing, nowMs),
        };
      },
    );
  }

  async item(name: string, windowName: string | undefined, item: string) {
    return this.withWindow(
      name,
      windowName,
      async (board, window, nowMs) => {
        const { draining, standing, ranked } = await this.store.item(board, window, nowMs, item);
        return {
          ...figures(name, window, nowMs, draining),
          item,
          score: standing.score,
          rank: standing.rank,
          percentile: percentileOf(standing, ranked),
        };
      },
      async (board, view, nowMs) => {
        const found = await this.store.viewItem(board, view, nowMs, item);
        const listing = {
          landmarkSec: found.landmarkSec,
          rows: found.row ? [{ ...found.row, rank: found.rank! }] : [],
        };
        const row = viewRows(board, view, listing, nowMs)[0];
        return {
          ...viewFigures(name, board, view, nowMs, found.draining),
          ...(row ?? { item, score: 0, rank: null }),
          percentile: percentileOf({ score: row?.score ?? 0, rank: found.rank }, found.listed),
        };
      },
    );
  }

  async around(
    name: string,
    windowName: string | undefined,
    item: string,
    radius: number,
  ): Promise<WindowFigures & { item: string; items: ViewRowAnswer[] }> {
    return this.withWindow(
      name,
      windowName,
      async (board, window, nowMs) => {
        const result = await this.store.around(board, window, nowMs, item, radius);
        return { ...figures(name, window, nowMs, result.draining), item, items: result.items };
      },
      async (board, view, nowMs) => {
        const listing = await this.store.viewAround(board, view, nowMs, item, radius);
        return {
          ...viewFigures(name, board, view, nowMs, listing.draining),
          item,
          items: viewRows(board, view, listing, nowMs),
        };
      },
    );
  }

  /** The board's change version: grows with every write (what the live stream polls). */
  async changeVersion(name: string): Promise<number> {
    return this.store.changeVersion(await this.cache.get(name));
  }

  /**
   * The window's snapshot at or before `atSec` (default: the latest): `from`/`to` are the span its
   * figures cover, the slot that closed at `at` and the period before it.
   */
  async history(
    name: string,
    windowName: string | undefined,
    atSec: number | undefined,
  ): Promise<{ board: string; window: string; at: number; from: number; to: number; items: ListedItem[] }> {
    return this.withWindow(
      name,
      windowName,
      async (board, window, nowMs) => {
        const { keeps, listing } = await this.store.history(board, window, nowMs, atSec);
        const found: SnapshotListing = listing ?? this.missingSnapshot(name, window.name, keeps, atSec);
        return {
          board: name,
          window: window.name,
          at: found.atSec,
          from: found.atSec - window.periodSec,
          to: found.atSec,
          items: found.items,
        };
      },
      (_, view) => this.viewHasNoHistory(name, view),
    );
  }

  /**
   * An item's rank and score in every kept snapshot from `fromSec` to `toSec` (default: all kept), oldest
   * first, a page at a time (HISTORY_ROWS_PER_CALL): `nextFrom` is the `from` of the next page, null
   * when the range is answered.
   */
  async itemHistory(
    name: string,
    windowName: string | undefined,
    item: string,
    fromSec: number | undefined,
    toSec: number | undefined,
  ): Promise<{ board: string; window: string; item: string; points: HistoryPoint[]; nextFrom: number | null }> {
    if (fromSec !== undefined && toSec !== undefined && fromSec > toSec)
      throw new InvalidInputError(M.historyRange(fromSec, toSec));
    return this.withWindow(
      name,
      windowName,
      async (board, window, nowMs) => {
        const range = { from: fromSec ?? 0, to: toSec ?? Math.floor(nowMs / 1000) };
        const { keeps, points, nextSec } = await this.store.itemHistory(
          board,
          window,
          nowMs,
          item,
          range.from,
          range.to,
        );
        if (!keeps) this.missingSnapshot(name, window.name, false, undefined);
        return { board: name, window: window.name, item, points, nextFrom: nextSec };
      },
      (_, view) => this.viewHasNoHistory(name, view),
    );
  }

  private viewHasNoHistory(board: string, view: { name: string; window: string }): never {
    throw new NotFoundError('SNAPSHOT_NOT_FOUND', M.viewKeepsNoHistory(board, view.name, view.window));
  }

  private missingSnapshot(board: string, window: string, keeps: boolean, atSec: number | undefined): never {
    throw new NotFoundError(
      'SNAPSHOT_NOT_FOUND',
      keeps ? M.noSnapshot(board, window, atSec) : M.keepsNoSnapshots(board, window),
    );
  }

  /**
   * One scheduler pass: claims the boards whose due time has come (shared with other instances: a
   * board claimed here is not visited elsewhere until its lease lapses), expires each until nothing
   * expired remains (bounded per board), and puts it back into the index at its next due time. Claims
   * again while claims come back full, only what was due when the pass began: a board put back as due
   * again (still draining, a PUT under way, a failure) waits for the next pass instead of keeping this
   * one going. Idle boards cost nothing: they are not in the index.
   */
  async expireDue(options: DuePassOptions): Promise<DuePassResult> {
    const result: DuePassResult = { visited: 0, failures: 0, stillDraining: 0, skipped: 0 };
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
   * Expires one claimed board: answers its next due time (unix ms; null: nothing left to expire), or
   * `againMs` when it must be visited again (still draining, a PUT under way, a failure).
   */
  private async visit(name: string, againMs: number, result: DuePassResult): Promise<number | null> {
    try {
      return await this.cache.withBoard(name, async (board) => {
        for (let call = 0; call < MAX_EXPIRE_CALLS_PER_PASS; call++) {
          const expired = await this.store.expire(board, this.clock.nowMs());
          if (!expired.draining) return expired.nextDueMs;
        }
        result.stillDraining++;
        return againMs;
      });
    } catch (error) {
      if (error instanceof NotFoundError) {
        await this.store.unregisterIfMissing(name);
        return null;
      }
      // A PUT of this board is under way (shards not synced yet): the next pass expires it.
      if (error instanceof ConflictError) {
        result.skipped++;
        return againMs;
      }
      result.failures++;
      this.logger.warn(`expiring board "${name}" failed: ${error instanceof Error ? error.message : String(error)}`);
      return againMs;
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
    const moved = await this.store.migrateLegacyRegistry(SWEEP_PAGE_BOARDS);
    if (moved > 0) this.logger.log(`moved ${moved} board name(s) from the registry set into the registry zset`);
    const { total } = await this.store.boardNamesPage({ offset: 0 }, 1);
    let entered = 0;
    let after = '';
    for (;;) {
      const names = await this.store.registryPageAfter(after, SWEEP_PAGE_BOARDS);
      const spreadMs = (position: number) => Math.floor((position * intervalMs) / Math.max(total, 1));
      await this.store.enqueueIfAbsent(names.map((name, i) => [name, startMs + spreadMs(entered + i)]));
      entered += names.length;
      if (names.length < SWEEP_PAGE_BOARDS) return entered;
      after = names[names.length - 1];
    }
  }

  /** A script's growth refusal as the client's error (BOARD_FULL for the board's cap); any other error as it is. */
  private growthError(error: unknown, reservation: Reservation, board: PreparedBoard): unknown {
    return growthErrorOf(
      error,
      reservation,
      (refusal: CapRefusal) =>
        new ConflictError(
          'BOARD_FULL',
          M.boardFull(board.config.name, refusal.held, refusal.cap, board.shards.length, refusal.wanted),
        ),
    );
  }

  /** Runs `read` on the named window, or `readView` on the named view; 404 naming both when neither exists. */
  /**
   * Runs a read of a window or a view, exact: a read whose window still holds expired data after its
   * script drained one chunk (a slot larger than EXPIRE_CHUNK) would list what fell out of the window,
   * so it is sent again, each time draining one more chunk, up to MAX_READ_DRAIN_CALLS; still
   * draining then, it is a 503 WINDOW_DRAINING (the scheduler and the next reads go on draining).
   * Each call is as short as any expiry call: Redis is never held longer for it. (History reads answer
   * no `draining`: snapshots are taken before anything expires.)
   */
  private async withWindow<T extends object>(
    name: string,
    windowName: string | undefined,
    read: (board: PreparedBoard, window: WindowConfig, nowMs: number) => Promise<T>,
    readView: (board: PreparedBoard, view: ViewConfig, nowMs: number) => Promise<T>,
  ): Promise<T> {
    for (let call = 1; ; call++) {
      const answer = await this.cache.withBoard(name, (board) => {
        const window = board.window(windowName);
        if (window) return read(board, window, this.clock.nowMs());
        const view = board.view(windowName);
        if (view) return readView(board, view, this.clock.nowMs());
        const known = [...board.config.windows, ...board.config.views].map((w) => w.name);
        throw new NotFoundError('WINDOW_NOT_FOUND', M.windowNotFound(name, windowName, known));
      });
      if (!('draining' in answer && answer.draining)) return answer;
      if (call >= MAX_READ_DRAIN_CALLS) throw new WindowDrainingError(M.windowDraining(name, MAX_READ_DRAIN_CALLS));
    }
  }
}

/** The fingerprint part of an optional `at`: nothing when absent. */
function timeOf(atSec: number | undefined): number[] {
  return atSec === undefined ? [] : [atSec];
}

/**
 * Refuses an event time the board cannot take (400 naming `field`): more than the skew ahead, or
 * older than every window's live span. `keyed`: a past `at` is left to the script, which answers a
 * replay of the key first (its event has aged out since) and refuses otherwise. Answers the problem.
 */
function checkAt(field: string, atSec: number | undefined, nowMs: number, board: PreparedBoard, keyed: boolean) {
  if (atSec === undefined) return undefined;
  const problem = atProblem(field, atSec, nowMs, board.config.windows);
  if (problem && !(problem.kind === 'past' && keyed)) throw new InvalidInputError(problem.message);
  return problem;
}

/** The fingerprint part of an optional `createdAt`: nothing when absent. */
function createdOf(createdAtSec: number | undefined): Array<string | number> {
  return createdAtSec === undefined ? [] : ['createdAt', createdAtSec];
}

/** Refuses an item creation time more than the skew ahead (400 naming `field`); any past time is fine. */
function checkCreatedAt(field: string, createdAtSec: number | undefined, nowMs: number): void {
  if (createdAtSec !== undefined && createdAtSec > nowMs / 1000 + MAX_FUTURE_SKEW_SEC)
    throw new InvalidInputError(M.atInFuture(field, MAX_FUTURE_SKEW_SEC, createdAtSec, nowMs / 1000));
}

/** A script's refusal of an event time as the client's 400, or undefined for any other error. */
function atRefusal(error: unknown, problem: { message: string } | undefined): InvalidInputError | undefined {
  if (!(error instanceof AtOutOfSpanError)) return undefined;
  return new InvalidInputError(problem?.message ?? M.atBeforeWindows);
}

function viewOf(config: BoardConfig): BoardView {
  return {
    name: config.name,
    shards: config.shards,
    windows: config.windows.map((w) => ({
      name: w.name,
      period: w.periodSec,
      interval: w.intervalSec,
      ...(w.snapshots ? { snapshots: w.snapshots } : {}),
    })),
    ...(config.maxItems === null ? {} : { maxItems: config.maxItems }),
    ...(config.views.length === 0 ? {} : { views: config.views.map(viewViewOf) }),
  };
}

/** Distinct item ids of a batch: the most new items it can create. */
function distinctItems(entries: BatchEntry[]): number {
  return new Set(entries.map((entry) => entry.item)).size;
}

/**
 * Splits a batch's reservation over its shards' parts, in shard order, each part getting at most its
 * own distinct items: a part refused for lack of allowance while an earlier one had some to spare
 * only happens when the reservation fell short of the whole batch.
 */
function allowancesOf(groups: Map<number, BatchEntry[]>, reserved: number): Map<number, number> {
  let left = reserved;
  const allowances = new Map<number, number>();
  for (const [shard, entries] of groups) {
    const share = reserved === UNLIMITED ? UNLIMITED : Math.min(left, distinctItems(entries));
    if (share !== UNLIMITED) left -= share;
    allowances.set(shard, share);
  }
  return allowances;
}

/** Each window's standing by name, in the order of the names the write was answered with. */
function byWindow(written: { windowNames: string[]; standings: WindowStanding[] }): Record<string, WindowStanding> {
  return Object.fromEntries(written.windowNames.map((name, i) => [name, written.standings[i]]));
}

/** A view's figures: the span of the window it reads (rising: the short one), and its mode. */
function viewFigures(board: string, prepared: PreparedBoard, view: ViewConfig, nowMs: number, draining: boolean) {
  return { ...figures(board, prepared.window(view.window)!, nowMs, draining), window: view.name, mode: view.mode };
}

/** A view's ranked rows as a client reads them: decay as the decayed sum as of now, rising with its figures. */
function viewRows(
  board: PreparedBoard,
  view: ViewConfig,
  listing: Pick<ViewListing, 'landmarkSec' | 'rows'>,
  nowMs: number,
): ViewRowAnswer[] {
  const window = board.window(view.window)!;
  return listing.rows.map((row) => {
    const answer: ViewRowAnswer = {
      rank: row.rank,
      item: row.item,
      score: view.mode === 'decay' ? decayedValue(row.score, listing.landmarkSec, nowMs, view.halfLifeSec!) : row.score,
      previousRank: null,
    };
    if (row.rising) {
      const rising = risingOf(row.rising.observed, row.rising.baseline, view as Required<ViewConfig>);
      const elapsedSec = nowMs / 1000 - windowSpan(nowMs, window).toSec + window.intervalSec;
      answer.observed = row.rising.observed;
      answer.expected = rising.expected;
      answer.phase = risingPhase({ ...row.rising, isNew: rising.isNew, elapsedSec, intervalSec: window.intervalSec });
      answer.since = row.rising.sinceSec;
    }
    return answer;
  });
}

function figures(board: string, window: WindowConfig, nowMs: number, draining: boolean): WindowFigures {
  const span = windowSpan(nowMs, window);
  return { board, window: window.name, from: span.fromSec, to: span.toSec, draining };
}

/** Share of the other ranked items scoring at or below this one, in percent (100: nobody scores higher). */
export function percentileOf(standing: Standing, ranked: number): number | null {
  if (standing.rank === null) return null;
  if (ranked <= 1) return 100;
  return Math.round(((ranked - standing.rank) / (ranked - 1)) * 10000) / 100;
}
