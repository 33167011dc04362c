import { Injectable } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { ConflictError } from '../common/errors';
import { RedisService } from '../redis/redis.service';
import { BoardConfig, PreparedBoard, ShardKeys } from './board';
import { RankingKeys } from './ranking.keys';
import { RANKING_MESSAGES as M } from './ranking.messages';
import { IdemCall, Idempotent, IdemRequest } from '../redis/idempotency';
import {
  BatchEntry,
  BoardCall,
  ListingReply,
  RANKING_SCRIPTS as S,
  Standing,
  StandingsReply,
  WriteCall,
} from './ranking.scripts';
import { ListedItem, mergeListings, rankRows, ScoredItem } from './shard-math';
import { WindowConfig, WindowSpec } from './window-math';

export type { ListedItem } from './shard-math';
export type { BatchEntry, Standing } from './ranking.scripts';

/** A script refused a write because the board is gone or its config changed since it was cached. */
export class BoardGoneError extends Error {}
export class StaleConfigError extends Error {}

/** A write's figures per window and the window names they go with (as they were, on a replay). */
export interface WriteOutcome {
  replayed: boolean;
  draining: boolean;
  windowNames: string[];
  standings: Standing[];
}

export interface BatchOutcome {
  /** True when every shard's part was replayed from its stored answer. */
  replayed: boolean;
  draining: boolean;
  applied: number;
  /** Entries of the shards whose call failed, and those failures. */
  refused: BatchEntry[];
  errors: unknown[];
}

export type PutBoardResult =
  { status: 'created' | 'updated' | 'unchanged'; config: BoardConfig } | { status: 'conflict'; message: string };

/** The only file of the ranking feature that talks to Redis: key lists, script calls, reply parsing. */
@Injectable()
export class RankingStore {
  readonly keys: RankingKeys;
  private readonly budgetFields: number;
  private readonly idemRetentionMs: number;

  constructor(
    private readonly redis: RedisService,
    config: AppConfig,
  ) {
    this.keys = new RankingKeys(redis.prefix);
    this.budgetFields = config.EXPIRE_CHUNK;
    this.idemRetentionMs = config.IDEMPOTENCY_TTL_SEC * 1000;
    redis.defineScripts(Object.values(S));
  }

  prepare(config: BoardConfig): PreparedBoard {
    return new PreparedBoard(config, (shard) => this.keys.board(config.name, shard));
  }

  async loadBoard(name: string): Promise<BoardConfig | undefined> {
    const stored = await this.redis.client.hgetall(this.keys.board(name).cfg());
    if (!stored.version || !stored.windows) return undefined;
    return {
      name,
      version: stored.version,
      shards: Number(stored.shards),
      windows: JSON.parse(stored.windows) as WindowConfig[],
    };
  }

  async listBoardNames(): Promise<string[]> {
    return this.redis.client.smembers(this.keys.boardRegistry());
  }

  /**
   * The registry entry comes first, so a board never exists unlisted (the scheduler walks the registry),
   * and is written again once the board is created, in case a racing DELETE unlisted it (see unregister).
   * Shard 0 decides (one atomic script); then every other shard gets a copy of its config, and shards
   * beyond the count (up to the most the board ever had) are deleted. A repeated PUT repairs whatever a
   * failed one left behind. `shards` undefined keeps the stored count.
   */
  async putBoard(
    name: string,
    windows: WindowSpec[],
    shards: number | undefined,
    reset: boolean,
    version: string,
    nowMs: number,
  ): Promise<PutBoardResult> {
    await this.redis.client.sadd(this.keys.boardRegistry(), name);
    const reply = await this.redis.call(S.boardPut, {
      keys: this.keys.board(name),
      windows,
      shards,
      reset,
      version,
      nowMs,
    });
    if (reply.status === 'conflict') return reply;
    if (reply.status === 'created') await this.redis.client.sadd(this.keys.boardRegistry(), name);
    const config: BoardConfig = {
      name,
      version: reply.version,
      shards: reply.shards,
      windows: JSON.parse(reply.windowsJson) as WindowConfig[],
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
  async deleteBoard(name: string, nowMs: number): Promise<boolean> {
    const cfg = await this.redis.client.hmget(this.keys.board(name).cfg(), 'shards', 'maxShards');
    const mostShards = Math.max(Number(cfg[0] ?? 1), Number(cfg[1] ?? 1));
    for (let shard = mostShards - 1; shard > 0; shard--) await this.deleteShard(name, shard, nowMs);
    const existed = await this.deleteShard(name, 0, nowMs);
    await this.unregister(name);
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
    const registry = this.keys.boardRegistry();
    await this.redis.client.srem(registry, name);
    if (await this.redis.client.hexists(this.keys.board(name).cfg(), 'windows'))
      await this.redis.client.sadd(registry, name);
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

  async increment(
    board: PreparedBoard,
    nowMs: number,
    item: string,
    amount: number,
    idem?: IdemRequest,
  ): Promise<WriteOutcome> {
    const shard = board.shardOf(item);
    const reply = await this.guard(
      this.redis.call(S.increment, { ...this.write(board, shard, nowMs, idem), item, amount }),
    );
    return this.rankOverShards(board, shard, nowMs, reply);
  }

  /**
   * One script call per shard holding any of the entries, in parallel: atomic on an unsharded board
   * (and per shard); the shards of a sharded board apply independently (see docs/scaling.md).
   * Answers what was applied, and the entries of shards that failed with their errors.
   */
  async incrementBatch(
    board: PreparedBoard,
    nowMs: number,
    groups: Map<number, BatchEntry[]>,
    idem?: IdemRequest,
  ): Promise<BatchOutcome> {
    const shards = [...groups];
    const settled = await Promise.allSettled(
      shards.map(([shard, entries]) =>
        this.guard(
          this.redis.call(S.incrementBatch, { ...this.write(board, board.shards[shard], nowMs, idem), entries }),
        ),
      ),
    );
    const outcome: BatchOutcome = { replayed: true, draining: false, applied: 0, refused: [], errors: [] };
    settled.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        outcome.replayed &&= result.value.replayed;
        outcome.draining ||= result.value.value.draining;
        outcome.applied += result.value.value.applied;
      } else {
        outcome.replayed = false;
        outcome.refused.push(...shards[i][1]);
        outcome.errors.push(result.reason);
      }
    });
    return outcome;
  }

  async like(
    board: PreparedBoard,
    nowMs: number,
    item: string,
    userId: string,
    undo: boolean,
    idem?: IdemRequest,
  ): Promise<WriteOutcome & { counted: boolean }> {
    const shard = board.shardOf(item);
    const reply = await this.guard(
      this.redis.call(S.like, { ...this.write(board, shard, nowMs, idem), item, userId, undo }),
    );
    return { ...(await this.rankOverShards(board, shard, nowMs, reply)), counted: reply.value.counted };
  }

  /** Expires every window of the board once on every shard (bounded by the chunk size); true while expired data remains. */
  async expire(board: PreparedBoard, nowMs: number): Promise<boolean> {
    const replies = await Promise.all(
      board.shards.map((shard) => this.guard(this.redis.call(S.expire, this.on(board, shard, nowMs)))),
    );
    return replies.some((draining) => draining);
  }

  async top(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    offset: number,
    limit: number,
  ): Promise<{ draining: boolean; items: ListedItem[] }> {
    if (!board.sharded) {
      const reply = await this.readTop(board, board.shards[0], window, nowMs, offset, limit);
      return { draining: reply.draining, items: rankRows(reply.rows, reply.firstPosition, reply.higherThanFirst) };
    }
    // Each shard's head down to offset + limit: the page's items are among them, and ranks count from the top.
    const replies = await Promise.all(
      board.shards.map((shard) => this.readTop(board, shard, window, nowMs, 0, offset + limit)),
    );
    const merged = mergeListings(replies.map((reply) => reply.rows));
    return {
      draining: replies.some((reply) => reply.draining),
      items: rankRows(merged, 0, 0).slice(offset, offset + limit),
    };
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
  ): Promise<{ draining: boolean; items: ListedItem[] }> {
    if (!board.sharded) {
      const reply = await this.guard(
        this.redis.call(S.readAround, { ...this.on(board, board.shards[0], nowMs), window, item, radius }),
      );
      const items = reply.firstPosition === -1 ? [] : rankRows(reply.rows, reply.firstPosition, reply.higherThanFirst);
      return { draining: reply.draining, items };
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
      items: rankRows(rows, firstPosition, higherThanFirst),
    };
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
  ): Promise<WriteOutcome> {
    const { draining, standings: own } = reply.value;
    const answered = { replayed: reply.replayed, windowNames: reply.context.split(',') };
    // A replay whose windows have changed since is answered exactly as stored.
    if (!board.sharded || answered.windowNames.join(',') !== board.windowNames)
      return { ...answered, draining, standings: own };
    try {
      const others = await this.countAbove(
        board,
        home,
        board.config.windows,
        nowMs,
        own.map((s) => s.score),
      );
      return {
        ...answered,
        draining: draining || others.draining,
        standings: own.map((s, w) => ({ score: s.score, rank: s.rank === null ? null : s.rank + others.above[w] })),
      };
    } catch (error) {
      if (!(error instanceof StaleConfigError || error instanceof BoardGoneError)) throw error;
      throw new ConflictError('WRITE_APPLIED_RANK_UNKNOWN', M.writeAppliedRankUnknown(board.config.name));
    }
  }

  /** Sums, over every shard but `except`, the items above each window's score and the ranked items. */
  private async countAbove(
    board: PreparedBoard,
    except: ShardKeys | undefined,
    windows: WindowConfig[],
    nowMs: number,
    scores: number[],
  ): Promise<{ draining: boolean; above: number[]; ranked: number[] }> {
    const shards = board.shards.filter((shard) => shard !== except);
    const replies = await Promise.all(
      shards.map((shard) =>
        this.guard(this.redis.call(S.countAbove, { ...this.on(board, shard, nowMs), windows, scores })),
      ),
    );
    return {
      draining: replies.some((reply) => reply.draining),
      above: windows.map((_, w) => replies.reduce((sum, reply) => sum + reply.above[w], 0)),
      ranked: windows.map((_, w) => replies.reduce((sum, reply) => sum + reply.ranked[w], 0)),
    };
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
    const call: IdemCall | undefined = idem && { ...idem, retentionMs: this.idemRetentionMs };
    return { ...this.on(board, shard, nowMs), idem: call };
  }

  /** Turns the scripts' refusals of a cached config into errors the service retries on. */
  private async guard<T>(pending: Promise<T>): Promise<T> {
    try {
      return await pending;
    } catch (error) {
      const message = error instanceof Error ? error.message : '';
      if (message.startsWith('TB_NO_BOARD')) throw new BoardGoneError(message);
      if (message.startsWith('TB_STALE_CONFIG')) throw new StaleConfigError(message);
      throw error;
    }
  }
}
