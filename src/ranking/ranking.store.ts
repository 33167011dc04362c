import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { ConflictError, InvalidInputError } from '../common/errors';
import { isRedisWrongNodeError } from '../common/redis-errors';
import { RedisService } from '../redis/redis.service';
import { BoardConfig, PreparedBoard, ShardKeys } from './board';
import { RankingKeys } from './ranking.keys';
import type { ViewConfig } from './trending-math';
import { RANKING_MESSAGES as M } from './ranking.messages';
import { Idempotent, IdemRequest } from '../redis/idempotency';
import { growthRefusalOf } from '../redis/refusals';
import {
  BatchEntry,
  BoardCall,
  CoalescedIncrement,
  DueClaim,
  ExpireReply,
  LedgerCall,
  LedgerEntry,
  ListingReply,
  RANKING_SCRIPTS as S,
  Standing,
  StandingsReply,
  ViewCall,
  ViewRead,
  ViewReply,
  ViewRow,
  WindowStanding,
  WriteCall,
} from './ranking.scripts';
import { Coalescer } from '../common/coalescer';
import { ListedItem, mergeListings, mergeShardHeads, rankRows, ScoredItem } from './shard-math';
import { slotStartSec, WindowConfig, WindowSpec } from './window-math';
import {
  HISTORY_ROWS_PER_CALL,
  MAX_CACHED_PREVIOUS_LISTINGS,
  MAX_COALESCED_INCREMENTS,
  MAX_SHARDED_DEPTH_ITEMS,
} from './ranking.limits';

export type { ListedItem } from './shard-math';
export type { BatchEntry, Standing, ViewRow, WindowStanding } from './ranking.scripts';

/** A listed row and its rank in the window's latest snapshot (null: absent, or the window keeps none). */
export interface RankedRow extends ListedItem {
  previousRank: number | null;
}

/** A window's listing at one snapshot boundary, over every shard. */
export interface SnapshotListing {
  atSec: number;
  items: ListedItem[];
}

/** An item in one snapshot: null rank and score when it was not among the snapshot's rows. */
export interface HistoryPoint {
  at: number;
  rank: number | null;
  score: number | null;
}

/** A view's rows ranked (by rank score), and the landmark a decay view's rank scores are relative to. */
export interface ViewListing {
  draining: boolean;
  landmarkSec: number;
  rows: Array<ViewRow & { rank: number }>;
}

/** A script refused a write because the board is gone or its config changed since it was cached. */
export class BoardGoneError extends Error {}
export class StaleConfigError extends Error {}
/** A write's event time (`at`) lies before every window's live span (see TB_AT_OUT_OF_SPAN in the scripts). */
export class AtOutOfSpanError extends Error {}

/** A write's figures per window and the window names they go with (as they were, on a replay). */
/** An item increment waiting to share a script call with others to the same shard. */
interface PendingIncrement {
  board: PreparedBoard;
  shard: ShardKeys;
  nowMs: number;
  increment: CoalescedIncrement;
}

export interface WriteOutcome {
  replayed: boolean;
  draining: boolean;
  windowNames: string[];
  standings: WindowStanding[];
  /** New items this write created (0 on a replay, or when no limit applied: nothing to charge). */
  createdItems: number;
}

export interface BatchOutcome {
  /** True when every shard's part was replayed from its stored answer. */
  replayed: boolean;
  draining: boolean;
  applied: number;
  /** New items the shards that applied created. */
  createdItems: number;
  /** Entries of the shards whose call failed, and those failures. */
  refused: BatchEntry[];
  errors: unknown[];
}

export type PutBoardResult =
  { status: 'created' | 'updated' | 'unchanged'; config: BoardConfig } | { status: 'conflict'; message: string };

/** Items above a score and ranked items per window, over some shards; draining while expired data remains. */
interface ShardCounts {
  draining: boolean;
  above: number[];
  ranked: number[];
}

function sumCounts(windows: WindowConfig[], counts: ShardCounts[]): ShardCounts {
  return {
    draining: counts.some((count) => count.draining),
    above: windows.map((_, w) => counts.reduce((sum, count) => sum + count.above[w], 0)),
    ranked: windows.map((_, w) => counts.reduce((sum, count) => sum + count.ranked[w], 0)),
  };
}

/** Ranks view rows like rankRows (competition ranks on the rank score), keeping each row's figures. */
function rankViewRows(
  rows: ViewRow[],
  firstPosition: number,
  higherThanFirst: number,
): Array<ViewRow & { rank: number }> {
  return rankRows(rows, firstPosition, higherThanFirst).map((ranked, i) => ({ ...rows[i], rank: ranked.rank }));
}

/** The only file of the ranking feature that talks to Redis: key lists, script calls, reply parsing. */
@Injectable()
export class RankingStore {
  readonly keys: RankingKeys;
  private readonly logger = new Logger('RankingStore');
  private readonly budgetFields: number;
  private readonly idemRetentionMs: number;
  /** Undefined when WRITE_COALESCE_MS is 0: each increment is its own call. */
  private readonly increments?: Coalescer<PendingIncrement, Idempotent<StandingsReply>>;
  /**
   * Sharded boards: each window's latest snapshot merged over the shards (item -> rank), read once per
   * slot per instance (snapshots never change once taken), so previousRank costs no round trip per request.
   */
  private readonly previousListings = new Map<
    string,
    { version: string; slotSec: number; ranks: Promise<Map<string, number>> }
  >();

  constructor(
    private readonly redis: RedisService,
    config: AppConfig,
  ) {
    this.keys = new RankingKeys(redis.prefix);
    this.budgetFields = config.EXPIRE_CHUNK;
    this.idemRetentionMs = config.IDEMPOTENCY_TTL_SEC * 1000;
    if (config.WRITE_COALESCE_MS > 0)
      this.increments = new Coalescer(
        { delayMs: config.WRITE_COALESCE_MS, maxBatch: MAX_COALESCED_INCREMENTS },
        (_, pending) => this.sendIncrements(pending),
      );
    redis.defineScripts(Object.values(S));
  }

  prepare(config: BoardConfig): PreparedBoard {
    return new PreparedBoard(config, (shard) => this.keys.board(config.name, shard));
  }

  async loadBoard(name: string): Promise<BoardConfig | undefined> {
    const stored = await this.redis.timed(this.redis.client.hgetall(this.keys.board(name).cfg()));
    if (!stored.version || !stored.windows) return undefined;
    return {
      name,
      version: stored.version,
      shards: Number(stored.shards),
      windows: JSON.parse(stored.windows) as WindowConfig[],
      maxItems: stored.maxItems ? Number(stored.maxItems) : null,
      views: stored.views ? (JSON.parse(stored.views) as ViewConfig[]) : [],
    };
  }

  /**
   * One page of registered names in byte order: from position `offset`, or after the name `after`
   * (a cursor: stable while boards come and go), and how many names the registry holds.
   */
  async boardNamesPage(
    from: { offset: number } | { after: string },
    limit: number,
  ): Promise<{ names: string[]; total: number }> {
    const registry = this.keys.boardRegistry();
    const [names, total] = await Promise.all([
      'after' in from
        ? this.redis.timed(this.redis.client.zrange(registry, `(${from.after}`, '+', 'BYLEX', 'LIMIT', 0, limit))
        : this.redis.timed(this.redis.client.zrange(registry, from.offset, from.offset + limit - 1)),
      this.redis.timed(this.redis.client.zcard(registry)),
    ]);
    return { names, total };
  }

  /** Configs of some boards in parallel (undefined where a listed name has no board). */
  loadBoards(names: string[]): Promise<Array<BoardConfig | undefined>> {
    return Promise.all(names.map((name) => this.loadBoard(name)));
  }

  /**
   * The registry entry comes first, so a board never exists unlisted (the scheduler walks the registry),
   * and is written again once the board is created, in case a racing DELETE unlisted it (see unregister).
   * Shard 0 decides (one atomic script); then every other shard gets a copy of its config, and shards
   * beyond the count (up to the most the board ever had) are deleted. A repeated PUT repairs whatever a
   * failed one left behind. `shards` and `maxItems` undefined keep the stored ones.
   */
  async putBoard(
    name: string,
    windows: WindowSpec[],
    shards: number | undefined,
    maxItems: number | undefined,
    views: ViewConfig[],
    reset: boolean,
    version: string,
    nowMs: number,
  ): Promise<PutBoardResult> {
    await this.register(name);
    const reply = await this.redis.call(S.boardPut, {
      keys: this.keys.board(name),
      windows,
      shards,
      maxItems,
      views,
      reset,
      version,
      nowMs,
    });
    if (reply.status === 'conflict') return reply;
    if (reply.status === 'created') await this.register(name);
    const config: BoardConfig = {
      name,
      version: reply.version,
      shards: reply.shards,
      windows: JSON.parse(reply.windowsJson) as WindowConfig[],
      maxItems: reply.maxItems,
      views: JSON.parse(reply.viewsJson) as ViewConfig[],
    };
    await Promise.all(
      Array.from({ length: reply.shards - 1 }, (_, i) =>
        this.redis.call(S.shardSync, { keys: this.keys.board(name, i + 1), ...reply, nowMs }),
      ),
    );
    for (let shard = reply.shards; shard < reply.mostShards; shard++) await this.deleteShard(name, shard, nowMs);
    return { status: reply.status, config };
  }

  /** Deletes every key of the board (every shard it ever had; shard 0, which holds the config, last), then its registry entry. */
  /** Claims (or reads) the ledger entry of a keyed request on a sharded board: see request_claim.lua. */
  claimRequest(board: PreparedBoard, idem: IdemRequest, nowMs: number): Promise<LedgerEntry> {
    return this.redis.call(S.requestClaim, this.ledger(board, idem, nowMs));
  }

  /** Stores the whole answer of a keyed request on a sharded board in its ledger entry. */
  async completeRequest(board: PreparedBoard, idem: IdemRequest, nowMs: number, body: string): Promise<void> {
    await this.redis.call(S.requestComplete, { ...this.ledger(board, idem, nowMs), body });
  }

  /** The ledger entry of a request lives on the shard its key hashes to: ledgers spread like items. */
  private ledger(board: PreparedBoard, idem: IdemRequest, nowMs: number): LedgerCall {
    return { ledger: board.shardOf(idem.key), nowMs, idem: this.redis.idemCall(idem) };
  }

  async deleteBoard(name: string, nowMs: number): Promise<boolean> {
    const cfg = await this.redis.timed(this.redis.client.hmget(this.keys.board(name).cfg(), 'shards', 'maxShards'));
    const mostShards = Math.max(Number(cfg[0] ?? 1), Number(cfg[1] ?? 1));
    for (let shard = mostShards - 1; shard > 0; shard--) await this.deleteShard(name, shard, nowMs);
    const existed = await this.deleteShard(name, 0, nowMs);
    await this.unregister(name);
    // Tidiness only: a due entry left behind costs one visit, which finds no board and drops it.
    await this.redis.timed(this.redis.client.zrem(this.keys.dueIndex(), name));
    return existed;
  }

  /**
   * Removes a registry entry, then lists the board again if its config exists by then. The registry and
   * the config are in different Cluster slots, so no script can do both. Instead every SREM is followed
   * by this check, and a PUT that creates a config SADDs after creating it. Take the last SREM of a
   * board: if its config exists at that SREM's check, the check lists it again; if it is created after
   * the check, that PUT lists it. So once racing PUTs and DELETEs are done, an existing board is listed.
   * A name may stay listed without a board (a check or PUT that SADDs after a later delete): listBoards
   * skips it and the scheduler's unregisterIfMissing removes it.
   */
  private async unregister(name: string): Promise<void> {
    await this.redis.timed(this.redis.client.zrem(this.keys.boardRegistry(), name));
    if (await this.redis.timed(this.redis.client.hexists(this.keys.board(name).cfg(), 'windows')))
      await this.register(name);
  }

  /** Every name scores 0: the registry zset stays in byte order of name. */
  private async register(name: string): Promise<void> {
    await this.redis.timed(this.redis.client.zadd(this.keys.boardRegistry(), 0, name));
  }

  private deleteShard(name: string, shard: number, nowMs: number): Promise<boolean> {
    return this.redis.call(S.boardDelete, {
      keys: this.keys.board(name, shard),
      nowMs,
      idemRetentionMs: this.idemRetentionMs,
    });
  }

  /** Removes a registry entry whose board has no config (left behind by a put that failed half way, or a race). */
  async unregisterIfMissing(name: string): Promise<void> {
    if ((await this.loadBoard(name)) === undefined) await this.unregister(name);
  }

  /** `newItems`: the new items the write may create (UNLIMITED: no quota). */
  async increment(
    board: PreparedBoard,
    nowMs: number,
    item: string,
    amount: number,
    newItems: number,
    idem?: IdemRequest,
    atMs = nowMs,
    createdMs?: number,
  ): Promise<WriteOutcome> {
    const shard = board.shardOf(item);
    const reply = await this.guard(
      this.increments
        ? this.increments.submit(`${shard.keys.cfg()}\n${board.config.version}\n${Math.floor(nowMs / 1000)}`, {
            board,
            shard,
            nowMs,
            increment: { item, amount, idem: this.redis.idemCall(idem), newItems, atMs, createdMs },
          })
        : this.redis.call(S.increment, {
            ...this.write(board, shard, nowMs, idem),
            item,
            amount,
            newItems,
            atMs,
            createdMs,
          }),
    );
    await this.indexDue(board, reply.created[1]);
    return this.rankOverShards(board, shard, nowMs, reply, item);
  }

  /**
   * Increments of one shard and config version that arrived together within one second: one call of
   * increment.lua applying them in order (`increments`; `increment` for a lone one). Slots and expiry go
   * by the second, so each lands where it would have alone at its own arrival; each gets its own answer
   * or refusal.
   */
  private async sendIncrements(pending: PendingIncrement[]): Promise<Array<Idempotent<StandingsReply> | Error>> {
    const { board, shard } = pending[0];
    const call = { board, shard, nowMs: Math.max(...pending.map((p) => p.nowMs)), budgetFields: this.budgetFields };
    if (pending.length === 1) return [await this.redis.call(S.increment, { ...call, ...pending[0].increment })];
    return this.redis.call(S.increments, { ...call, requests: pending.map((p) => p.increment) });
  }

  /**
   * One script call per shard holding any of the entries, in parallel: atomic on an unsharded board
   * (and per shard); the shards of a sharded board apply independently (see docs/scaling.md).
   * Answers what was applied, and the entries of shards that failed with their errors. `newItems`:
   * the new items each shard's part may create (UNLIMITED: no quota).
   */
  async incrementBatch(
    board: PreparedBoard,
    nowMs: number,
    groups: Map<number, BatchEntry[]>,
    newItems: Map<number, number>,
    idem?: IdemRequest,
  ): Promise<BatchOutcome> {
    const shards = [...groups];
    const settled = await Promise.allSettled(
      shards.map(([shard, entries]) =>
        this.guard(
          this.redis.call(S.incrementBatch, {
            ...this.write(board, board.shards[shard], nowMs, idem),
            entries,
            newItems: newItems.get(shard)!,
          }),
        ),
      ),
    );
    const outcome: BatchOutcome = {
      replayed: true,
      draining: false,
      applied: 0,
      createdItems: 0,
      refused: [],
      errors: [],
    };
    let dueMs = 0;
    settled.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        outcome.replayed &&= result.value.replayed;
        outcome.draining ||= result.value.value.draining;
        outcome.applied += result.value.value.applied;
        outcome.createdItems += result.value.created[0];
        const shardDueMs = result.value.created[1];
        if (shardDueMs > 0) dueMs = dueMs === 0 ? shardDueMs : Math.min(dueMs, shardDueMs);
      } else {
        outcome.replayed = false;
        outcome.refused.push(...shards[i][1]);
        outcome.errors.push(result.reason);
      }
    });
    await this.indexDue(board, dueMs);
    return outcome;
  }

  /** `growth`: the new items and likes the write may create (UNLIMITED: no quota). */
  async like(
    board: PreparedBoard,
    nowMs: number,
    item: string,
    userId: string,
    undo: boolean,
    growth: { newItems: number; newLikes: number },
    idem?: IdemRequest,
    atMs = nowMs,
  ): Promise<WriteOutcome & { counted: boolean; createdLikes: number }> {
    const shard = board.shardOf(item);
    const reply = await this.guard(
      this.redis.call(S.like, { ...this.write(board, shard, nowMs, idem), item, userId, undo, ...growth, atMs }),
    );
    await this.indexDue(board, reply.created[2]);
    return {
      ...(await this.rankOverShards(board, shard, nowMs, reply, item)),
      counted: reply.value.counted,
      createdLikes: reply.created[1],
    };
  }

  /**
   * Expires every window of the board once on every shard (bounded by the chunk size): whether expired
   * data remains, and when the board next has something to expire (the earliest over its shards).
   */
  async expire(board: PreparedBoard, nowMs: number): Promise<ExpireReply> {
    const replies = await Promise.all(
      board.shards.map((shard) => this.guard(this.redis.call(S.expire, this.on(board, shard, nowMs)))),
    );
    const dues = replies.flatMap((reply) => (reply.nextDueMs === null ? [] : [reply.nextDueMs]));
    return {
      draining: replies.some((reply) => reply.draining),
      nextDueMs: dues.length === 0 ? null : Math.min(...dues),
    };
  }

  /**
   * A write created a slot that is now its shard's earliest to expire (`dueMs` > 0): the board's due
   * entry moves that early (ZADD LT never delays it). A single-key command on the index's own tag,
   * since no script may touch a board's keys and the index together on a Cluster. A failure only
   * delays the scheduler's visit to this board until the sweep (reads expire lazily anyway), so the
   * applied write is still answered.
   */
  private async indexDue(board: PreparedBoard, dueMs: number): Promise<void> {
    if (dueMs <= 0) return;
    await this.redis
      .timed(this.redis.client.zadd(this.keys.dueIndex(), 'LT', dueMs, board.config.name))
      .catch((error: unknown) =>
        this.logger.warn(`due index not updated for "${board.config.name}": ${String(error)}`),
      );
  }

  /** Claims, from `nowMs` for `leaseMs`, up to `most` boards due by `dueByMs` (due_claim.lua). */
  claimDue(nowMs: number, leaseMs: number, most: number, dueByMs = nowMs): Promise<DueClaim> {
    return this.redis.call(S.dueClaim, { keys: this.keys, nowMs, leaseMs, most, dueByMs });
  }

  /** Ends the claims of visited boards, each back in the index at its next due time (null: none). */
  async completeDue(leaseEndMs: number, visited: Map<string, number | null>): Promise<void> {
    if (visited.size > 0) await this.redis.call(S.dueComplete, { keys: this.keys, leaseEndMs, visited });
  }

  /** True for the one caller (fleet-wide) that takes the sweep of this interval (sweep_turn.lua). */
  takeSweepTurn(nowMs: number, intervalMs: number): Promise<boolean> {
    return this.redis.call(S.sweepTurn, { keys: this.keys, nowMs, intervalMs });
  }

  /**
   * Moves the names of the registry set kept before paging into the registry zset (and drops them from
   * the set once copied, so a repeat or a crash half way is harmless). Answers how many were moved.
   */
  async migrateLegacyRegistry(pageSize: number): Promise<number> {
    const legacy = this.keys.legacyBoardRegistry();
    let moved = 0;
    let cursor = '0';
    do {
      const [next, names] = await this.redis.timed(this.redis.client.sscan(legacy, cursor, 'COUNT', pageSize));
      if (names.length > 0) {
        await this.redis.timed(
          this.redis.client.zadd(this.keys.boardRegistry(), ...names.flatMap((name) => [0, name])),
        );
        await this.redis.timed(this.redis.client.srem(legacy, ...names));
        moved += names.length;
      }
      cursor = next;
    } while (cursor !== '0');
    return moved;
  }

  /** Names of the registry after `after` (byte order; '' for the first page), at most `limit`. */
  registryPageAfter(after: string, limit: number): Promise<string[]> {
    const from = after === '' ? '-' : `(${after}`;
    return this.redis.timed(this.redis.client.zrange(this.keys.boardRegistry(), from, '+', 'BYLEX', 'LIMIT', 0, limit));
  }

  /** Enters boards that have no due entry yet (ZADD NX), each at its own due time. */
  async enqueueIfAbsent(entries: Array<[string, number]>): Promise<void> {
    if (entries.length === 0) return;
    await this.redis.timed(
      this.redis.client.zadd(this.keys.dueIndex(), 'NX', ...entries.flatMap(([name, dueMs]) => [dueMs, name])),
    );
  }

  async top(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    offset: number,
    limit: number,
  ): Promise<{ draining: boolean; items: RankedRow[] }> {
    if (!board.sharded) {
      const reply = await this.readTop(board, board.shards[0], window, nowMs, offset, limit);
      return { draining: reply.draining, items: withPreviousRanks(reply) };
    }
    // The board's head down to offset + limit, read progressively (mergeShardHeads): ranks count from the top.
    const depth = offset + limit;
    let draining = false;
    const [{ rows }, previous] = await Promise.all([
      mergeShardHeads(board.shards.length, depth, async (shard, from, count) => {
        this.redis.admit();
        const reply = await this.readTop(board, board.shards[shard], window, nowMs, from, count);
        draining ||= reply.draining;
        return reply.rows;
      }),
      this.previousRanks(board, window, nowMs),
    ]);
    return { draining, items: rankedWith(rankRows(rows, 0, 0).slice(offset, depth), previous) };
  }

  async item(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    item: string,
  ): Promise<{ draining: boolean; standing: Standing; ranked: number }> {
    const home = board.shardOf(item);
    const own = await this.guard(this.redis.call(S.readItem, { ...this.on(board, home, nowMs), window, item }));
    if (!board.sharded) return own;
    const others = await this.countAbove(board, home, [window], nowMs, [own.standing.score]);
    return {
      draining: own.draining || others.draining,
      standing: {
        score: own.standing.score,
        rank: own.standing.rank === null ? null : own.standing.rank + others.above[0],
      },
      ranked: own.ranked + others.ranked[0],
    };
  }

  async around(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    item: string,
    radius: number,
  ): Promise<{ draining: boolean; items: RankedRow[] }> {
    if (!board.sharded) {
      const reply = await this.guard(
        this.redis.call(S.readAround, { ...this.on(board, board.shards[0], nowMs), window, item, radius }),
      );
      return { draining: reply.draining, items: reply.firstPosition === -1 ? [] : withPreviousRanks(reply) };
    }
    const home = board.shardOf(item);
    const own = await this.guard(this.redis.call(S.readItem, { ...this.on(board, home, nowMs), window, item }));
    const score = own.standing.score;
    if (score <= 0) return { draining: own.draining, items: [] };
    const replies = await Promise.all(
      board.shards.map((shard) =>
        this.guard(this.redis.call(S.readNeighbours, { ...this.on(board, shard, nowMs), window, item, score, radius })),
      ),
    );
    const position = replies.reduce((sum, reply) => sum + reply.position, 0);
    const above = replies.reduce((sum, reply) => sum + reply.above, 0);
    const before = mergeListings(replies.map((reply) => reply.before)).slice(-radius);
    const after = mergeListings(replies.map((reply) => reply.after))
      .filter((row) => row.score > 0)
      .slice(0, radius);
    const rows: ScoredItem[] = [...before, { item, score }, ...after];
    const firstPosition = position - before.length;
    let higherThanFirst = above;
    if (rows[0].score !== score)
      higherThanFirst =
        firstPosition === 0 ? 0 : (await this.countAbove(board, undefined, [window], nowMs, [rows[0].score])).above[0];
    return {
      draining: own.draining || replies.some((reply) => reply.draining),
      items: rankedWith(rankRows(rows, firstPosition, higherThanFirst), await this.previousRanks(board, window, nowMs)),
    };
  }

  /** The board's change version: the sum of its shards' (each write bumps its own shard's). One read per shard. */
  async changeVersion(board: PreparedBoard): Promise<number> {
    const versions = await Promise.all(
      board.shards.map((shard) => this.redis.timed(this.redis.client.hget(shard.keys.cfg(), 'ver'))),
    );
    return versions.reduce((sum, version) => sum + Number(version ?? 0), 0);
  }

  /**
   * The window's snapshot at or before `atSec` (undefined: the latest), merged over the shards (each
   * shard's snapshot at or before that time; the answer is at the latest of theirs). keeps: false
   * when the window keeps no snapshots; listing undefined when none is kept for that time.
   */
  async history(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    atSec: number | undefined,
  ): Promise<{ keeps: boolean; listing?: SnapshotListing }> {
    const replies = await Promise.all(
      board.shards.map((shard) =>
        this.guard(this.redis.call(S.historyRead, { ...this.on(board, shard, nowMs), window, atSec })),
      ),
    );
    if (!replies.some((reply) => reply.keeps)) return { keeps: false };
    const found = replies.flatMap((reply) => (reply.snapshot ? [reply.snapshot] : []));
    if (found.length === 0) return { keeps: true };
    const rows = mergeListings(found.map((snapshot) => snapshot.rows)).slice(0, window.snapshots?.top);
    return {
      keeps: true,
      listing: { atSec: Math.max(...found.map((snapshot) => snapshot.atSec)), items: rankRows(rows, 0, 0) },
    };
  }

  /**
   * An item's rank and score in each kept snapshot between fromSec and toSec, oldest first. On a sharded
   * board the item's shard answers its scores and the other shards count the rows above them: a rank
   * beyond the snapshot's rows is answered as not listed, as on an unsharded board. One page: about
   * HISTORY_ROWS_PER_CALL snapshot rows are scanned per call (on each shard); nextSec is where the
   * next page starts (null: the range is answered).
   */
  async itemHistory(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    item: string,
    fromSec: number,
    toSec: number,
  ): Promise<{ keeps: boolean; nextSec: number | null; points: HistoryPoint[] }> {
    const home = board.shardOf(item);
    const top = window.snapshots?.top ?? 0;
    const mostSnapshots = Math.max(1, Math.floor(HISTORY_ROWS_PER_CALL / Math.max(1, top)));
    const own = await this.guard(
      this.redis.call(S.historyItem, { ...this.on(board, home, nowMs), window, item, fromSec, toSec, mostSnapshots }),
    );
    const listed = own.points.filter((point) => point.above >= 0);
    const others = await Promise.all(
      board.shards
        .filter((shard) => shard !== home && listed.length > 0)
        .map((shard) =>
          this.guard(this.redis.call(S.historyCount, { ...this.on(board, shard, nowMs), window, points: listed })),
        ),
    );
    const aboveElsewhere = new Map(
      listed.map((point, i) => [point.atSec, others.reduce((sum, counts) => sum + counts[i], 0)]),
    );
    return {
      keeps: own.keeps,
      nextSec: own.nextSec,
      points: own.points.map((point) => {
        const rank = point.above < 0 ? null : point.above + (aboveElsewhere.get(point.atSec) ?? 0) + 1;
        return rank === null || rank > top
          ? { at: point.atSec, rank: null, score: null }
          : { at: point.atSec, rank, score: point.score };
      }),
    };
  }

  /** Sharded boards: the window's latest snapshot over every shard, item -> rank (cached per slot). */
  private previousRanks(board: PreparedBoard, window: WindowConfig, nowMs: number): Promise<Map<string, number>> {
    if (!window.snapshots) return Promise.resolve(new Map());
    const key = `${board.config.name}\x1f${window.name}`;
    const slotSec = slotStartSec(Math.floor(nowMs / 1000), window.intervalSec);
    const cached = this.previousListings.get(key);
    if (cached && cached.version === board.config.version && cached.slotSec === slotSec) return cached.ranks;
    if (this.previousListings.size >= MAX_CACHED_PREVIOUS_LISTINGS) this.previousListings.clear();
    const ranks = this.history(board, window, nowMs, undefined).then(
      ({ listing }) => new Map((listing?.items ?? []).map((row) => [row.item, row.rank])),
    );
    this.previousListings.set(key, { version: board.config.version, slotSec, ranks });
    ranks.catch(() => this.previousListings.delete(key));
    return ranks;
  }

  /** A page of a view: like top, merged over the shards by rank score (every shard rebased to the same landmark). */
  async viewTop(
    board: PreparedBoard,
    view: ViewConfig,
    nowMs: number,
    offset: number,
    limit: number,
  ): Promise<ViewListing> {
    if (!board.sharded) {
      const reply = await this.readView(board, board.shards[0], view, nowMs, { op: 'top', offset, limit });
      return {
        draining: reply.draining,
        landmarkSec: reply.landmarkSec,
        rows: rankViewRows(reply.rows, reply.a, reply.b),
      };
    }
    const depth = offset + limit;
    let draining = false;
    let landmarkSec = 0;
    const { rows } = await mergeShardHeads(board.shards.length, depth, async (shard, from, count) => {
      this.redis.admit();
      const reply = await this.readView(board, board.shards[shard], view, nowMs, {
        op: 'top',
        offset: from,
        limit: count,
      });
      draining ||= reply.draining;
      landmarkSec = reply.landmarkSec;
      return reply.rows;
    });
    return { draining, landmarkSec, rows: rankViewRows(rows, 0, 0).slice(offset, depth) };
  }

  /** One item of a view: its row (absent when not listed), board-wide rank and the listed items. */
  async viewItem(
    board: PreparedBoard,
    view: ViewConfig,
    nowMs: number,
    item: string,
  ): Promise<{
    draining: boolean;
    landmarkSec: number;
    row: ViewRow | undefined;
    rank: number | null;
    listed: number;
  }> {
    const home = board.shardOf(item);
    const own = await this.readView(board, home, view, nowMs, { op: 'item', item });
    const row = own.rows[0];
    let { draining } = own;
    let above = own.a - 1;
    let listed = own.b;
    if (board.sharded) {
      const rankScore = row?.score ?? 0;
      const others = await Promise.all(
        board.shards
          .filter((shard) => shard !== home)
          .map((shard) => this.readView(board, shard, view, nowMs, { op: 'count', rankScore })),
      );
      for (const other of others) {
        draining ||= other.draining;
        above += other.a;
        listed += other.b;
      }
    }
    return { draining, landmarkSec: own.landmarkSec, row, rank: row === undefined ? null : above + 1, listed };
  }

  /**
   * An item of a view with up to `radius` neighbours on each side. A sharded board reads the page of the
   * board listing around the item's rank (bounded like a deep top page).
   */
  async viewAround(
    board: PreparedBoard,
    view: ViewConfig,
    nowMs: number,
    item: string,
    radius: number,
  ): Promise<ViewListing> {
    if (!board.sharded) {
      const reply = await this.readView(board, board.shards[0], view, nowMs, { op: 'around', item, radius });
      const rows = reply.a === -1 ? [] : rankViewRows(reply.rows, reply.a, reply.b);
      return { draining: reply.draining, landmarkSec: reply.landmarkSec, rows };
    }
    const own = await this.viewItem(board, view, nowMs, item);
    if (own.rank === null) return { draining: own.draining, landmarkSec: own.landmarkSec, rows: [] };
    // Items tied with it may come before it: read from radius rows above its rank to radius rows past the ties.
    const offset = Math.max(0, own.rank - 1 - radius);
    if (offset >= MAX_SHARDED_DEPTH_ITEMS) throw new InvalidInputError(M.shardedAroundTooDeep(MAX_SHARDED_DEPTH_ITEMS));
    const page = await this.viewTop(
      board,
      view,
      nowMs,
      offset,
      Math.min(MAX_SHARDED_DEPTH_ITEMS - offset, 4 * radius + 1),
    );
    const at = page.rows.findIndex((row) => row.item === item);
    const rows = at === -1 ? [] : page.rows.slice(Math.max(0, at - radius), at + radius + 1);
    return { draining: own.draining || page.draining, landmarkSec: page.landmarkSec, rows };
  }

  private readView(
    board: PreparedBoard,
    shard: ShardKeys,
    view: ViewConfig,
    nowMs: number,
    read: ViewRead,
  ): Promise<ViewReply> {
    const windows = [view.window, ...(view.baseline === undefined ? [] : [view.baseline])].map((name) =>
      board.window(name)!,
    );
    const call: ViewCall = { ...this.on(board, shard, nowMs), view, windows, read };
    return this.guard(this.redis.call(S.readView, call));
  }

  /**
   * Adds the items scoring above each window's score on the other shards to ranks computed on the
   * item's own shard. The write has been applied by then, so a config change racing this read must
   * not reach the caller's retry (which would apply the write again): it answers a 409 saying so.
   */
  private async rankOverShards(
    board: PreparedBoard,
    home: ShardKeys,
    nowMs: number,
    reply: Idempotent<StandingsReply>,
    item: string,
  ): Promise<WriteOutcome> {
    const { draining, standings: own } = reply.value;
    const answered = {
      replayed: reply.replayed,
      windowNames: reply.context.split(','),
      createdItems: reply.created[0],
    };
    // A replay whose windows have changed since is answered exactly as stored.
    if (!board.sharded || answered.windowNames.join(',') !== board.windowNames)
      return { ...answered, draining, standings: own };
    try {
      const [others, previous] = await Promise.all([
        this.countAbove(
          board,
          home,
          board.config.windows,
          nowMs,
          own.map((s) => s.score),
        ),
        Promise.all(board.config.windows.map((window) => this.previousRanks(board, window, nowMs))),
      ]);
      return {
        ...answered,
        draining: draining || others.draining,
        standings: own.map((s, w) => ({
          score: s.score,
          rank: s.rank === null ? null : s.rank + others.above[w],
          previousRank: previous[w].get(item) ?? null,
        })),
      };
    } catch (error) {
      if (!(error instanceof StaleConfigError || error instanceof BoardGoneError)) throw error;
      throw new ConflictError('WRITE_APPLIED_RANK_UNKNOWN', M.writeAppliedRankUnknown(board.config.name));
    }
  }

  /**
   * Sums, over every shard but `except`, the items above each window's score and the ranked items: one
   * count_above_shards call per Redis node serving some of them (one call on a single node), then one
   * count_above call for each shard that call could not count (expired data to drain first, or a node
   * that no longer serves it).
   */
  private async countAbove(
    board: PreparedBoard,
    except: ShardKeys | undefined,
    windows: WindowConfig[],
    nowMs: number,
    scores: number[],
  ): Promise<ShardCounts> {
    const shards = board.shards.filter((shard) => shard !== except);
    const groups = this.redis.groupByNode(shards.map((shard) => shard.keys.cfg()));
    const counts = await Promise.all(
      groups.map((group) =>
        this.countOnNode(
          board,
          group.map((i) => shards[i]),
          windows,
          nowMs,
          scores,
        ),
      ),
    );
    return sumCounts(windows, counts);
  }

  private async countOnNode(
    board: PreparedBoard,
    shards: ShardKeys[],
    windows: WindowConfig[],
    nowMs: number,
    scores: number[],
  ): Promise<ShardCounts> {
    const counts: ShardCounts[] = [];
    let uncounted = shards;
    if (shards.length > 1) {
      try {
        const reply = await this.guard(this.redis.call(S.countAboveShards, { board, shards, nowMs, windows, scores }));
        counts.push({ draining: false, above: reply.above, ranked: reply.ranked });
        uncounted = reply.pending;
      } catch (error) {
        if (!isRedisWrongNodeError(error)) throw error;
      }
    }
    counts.push(
      ...(await Promise.all(
        uncounted.map((shard) =>
          this.guard(this.redis.call(S.countAbove, { ...this.on(board, shard, nowMs), windows, scores })),
        ),
      )),
    );
    return sumCounts(windows, counts);
  }

  private readTop(
    board: PreparedBoard,
    shard: ShardKeys,
    window: WindowConfig,
    nowMs: number,
    offset: number,
    limit: number,
  ): Promise<ListingReply> {
    return this.guard(this.redis.call(S.readTop, { ...this.on(board, shard, nowMs), window, offset, limit }));
  }

  private on(board: PreparedBoard, shard: ShardKeys, nowMs: number): BoardCall {
    return { board, shard, nowMs, budgetFields: this.budgetFields };
  }

  private write(board: PreparedBoard, shard: ShardKeys, nowMs: number, idem: IdemRequest | undefined): WriteCall {
    return { ...this.on(board, shard, nowMs), idem: this.redis.idemCall(idem) };
  }

  /** Turns the scripts' refusals (a cached config, growth) into errors the service acts on. */
  private async guard<T>(pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (error) {
      const message = error instanceof Error ? error.message : '';
      if (message.startsWith('TB_NO_BOARD')) throw new BoardGoneError(message);
      if (message.startsWith('TB_STALE_CONFIG')) throw new StaleConfigError(message);
      if (message.startsWith('TB_AT_OUT_OF_SPAN')) throw new AtOutOfSpanError(message);
      throw growthRefusalOf(error) ?? error;
    }
  }
}

/** An unsharded listing's rows ranked, each with its previous rank as the script answered it. */
function withPreviousRanks(reply: ListingReply): RankedRow[] {
  return rankRows(reply.rows, reply.firstPosition, reply.higherThanFirst).map((row, i) => ({
    ...row,
    previousRank: reply.previousRanks[i],
  }));
}

function rankedWith(rows: ListedItem[], previous: Map<string, number>): RankedRow[] {
  return rows.map((row) => ({ ...row, previousRank: previous.get(row.item) ?? null }));
}
