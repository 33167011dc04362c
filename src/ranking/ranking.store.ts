import { Injectable } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { ConflictError } from '../common/errors';
import { RedisService } from '../redis/redis.service';
import { BoardConfig, PreparedBoard, ShardKeys, windowArgsOf } from './board';
import { RANKING_SCRIPTS as S } from './ranking.scripts';
import { ListedItem, mergeListings, rankRows, ScoredItem } from './shard-math';
import { WindowConfig, WindowSpec } from './window-math';

export type { ListedItem } from './shard-math';

/** A script refused a write because the board is gone or its config changed since it was cached. */
export class BoardGoneError extends Error {}
export class StaleConfigError extends Error {}

/** Score and competition rank of an item in one window (rank null: not ranked). */
export interface Standing {
  score: number;
  rank: number | null;
}

export interface BatchEntry {
  item: string;
  amount: number;
}

export interface BatchOutcome {
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
  private readonly budget: number;

  constructor(
    private readonly redis: RedisService,
    config: AppConfig,
  ) {
    this.budget = config.EXPIRE_CHUNK;
    redis.defineScripts(Object.values(S));
  }

  prepare(config: BoardConfig): PreparedBoard {
    return new PreparedBoard(config, (shard) => this.redis.keys.board(config.name, shard));
  }

  async loadBoard(name: string): Promise<BoardConfig | undefined> {
    const stored = await this.redis.client.hgetall(this.redis.keys.board(name).cfg());
    if (!stored.version || !stored.windows) return undefined;
    return {
      name,
      version: stored.version,
      shards: Number(stored.shards),
      windows: JSON.parse(stored.windows) as WindowConfig[],
    };
  }

  async listBoardNames(): Promise<string[]> {
    return this.redis.client.smembers(this.redis.keys.boardRegistry());
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
    await this.redis.client.sadd(this.redis.keys.boardRegistry(), name);
    const keys = this.redis.keys.board(name);
    const reply = await this.redis.run<string[]>(
      S.boardPut,
      [keys.cfg()],
      [JSON.stringify(windows), shards ?? '', version, reset ? 1 : 0, nowMs],
    );
    if (reply[0] === 'conflict') return { status: 'conflict', message: reply[1] };
    if (reply[0] === 'created') await this.redis.client.sadd(this.redis.keys.boardRegistry(), name);
    const [status, storedVersion, windowsJson] = reply;
    const [stored, revision, mostShards] = [Number(reply[3]), Number(reply[4]), Number(reply[5])];
    const config: BoardConfig = {
      name,
      version: storedVersion,
      shards: stored,
      windows: JSON.parse(windowsJson) as WindowConfig[],
    };
    await Promise.all(
      Array.from({ length: stored - 1 }, (_, i) =>
        this.redis.run<string>(
          S.shardSync,
          [this.redis.keys.board(name, i + 1).cfg()],
          [storedVersion, windowsJson, stored, revision, nowMs],
        ),
      ),
    );
    for (let shard = stored; shard < mostShards; shard++) await this.deleteShard(name, shard);
    return { status: status as 'created' | 'updated' | 'unchanged', config };
  }

  /** Deletes every key of the board (every shard it ever had; shard 0, which holds the config, last), then its registry entry. */
  async deleteBoard(name: string): Promise<boolean> {
    const cfg = await this.redis.client.hmget(this.redis.keys.board(name).cfg(), 'shards', 'maxShards');
    const mostShards = Math.max(Number(cfg[0] ?? 1), Number(cfg[1] ?? 1));
    for (let shard = mostShards - 1; shard > 0; shard--) await this.deleteShard(name, shard);
    const existed = await this.deleteShard(name, 0);
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
    const registry = this.redis.keys.boardRegistry();
    await this.redis.client.srem(registry, name);
    if (await this.redis.client.hexists(this.redis.keys.board(name).cfg(), 'windows'))
      await this.redis.client.sadd(registry, name);
  }

  private async deleteShard(name: string, shard: number): Promise<boolean> {
    const keys = this.redis.keys.board(name, shard);
    return (await this.redis.run<number>(S.boardDelete, [keys.cfg(), keys.likes()], [])) === 1;
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
  ): Promise<{ draining: boolean; standings: Standing[] }> {
    const shard = board.shardOf(item);
    const reply = await this.call<number[]>(S.increment, board, shard.incrementKeys, nowMs, [item, amount]);
    return this.rankOverShards(board, shard, nowMs, reply[0] === 1, standings(reply, 1));
  }

  /**
   * One script call per shard holding any of the entries, in parallel: atomic on an unsharded board
   * (and per shard); the shards of a sharded board apply independently (see docs/scaling.md).
   * Answers what was applied, and the entries of shards that failed with their errors.
   */
  async incrementBatch(board: PreparedBoard, nowMs: number, groups: Map<number, BatchEntry[]>): Promise<BatchOutcome> {
    const shards = [...groups];
    const settled = await Promise.allSettled(
      shards.map(([shard, entries]) =>
        this.call<number[]>(
          S.incrementBatch,
          board,
          board.shards[shard].incrementKeys,
          nowMs,
          entries.flatMap((e) => [e.item, e.amount]),
        ),
      ),
    );
    const outcome: BatchOutcome = { draining: false, applied: 0, refused: [], errors: [] };
    settled.forEach((result, i) => {
      if (result.status === 'fulfilled') {
        outcome.draining ||= result.value[0] === 1;
        outcome.applied += result.value[1];
      } else {
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
  ): Promise<{ draining: boolean; counted: boolean; standings: Standing[] }> {
    const shard = board.shardOf(item);
    const reply = await this.call<number[]>(S.like, board, shard.allKeys, nowMs, [item, userId, undo ? 1 : 0]);
    const ranked = await this.rankOverShards(board, shard, nowMs, reply[0] === 1, standings(reply, 2));
    return { ...ranked, counted: reply[1] === 1 };
  }

  /** Expires every window of the board once on every shard (bounded by the chunk size); true while expired data remains. */
  async expire(board: PreparedBoard, nowMs: number): Promise<boolean> {
    const replies = await Promise.all(
      board.shards.map((shard) => this.call<number>(S.expire, board, shard.allKeys, nowMs, [])),
    );
    return replies.some((draining) => draining === 1);
  }

  async top(
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    offset: number,
    limit: number,
  ): Promise<{ draining: boolean; items: ListedItem[] }> {
    if (!board.sharded) {
      const reply = await this.read<Array<string | number>>(S.readTop, board.shards[0], board, window, nowMs, [
        offset,
        limit,
      ]);
      return { draining: reply[0] === 1, items: listing(reply) };
    }
    // Each shard's head down to offset + limit: the page's items are among them, and ranks count from the top.
    const replies = await Promise.all(
      board.shards.map((shard) =>
        this.read<Array<string | number>>(S.readTop, shard, board, window, nowMs, [0, offset + limit]),
      ),
    );
    const merged = mergeListings(replies.map((reply) => pairsOf(reply, 3)));
    return {
      draining: replies.some((reply) => reply[0] === 1),
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
    const reply = await this.read<number[]>(S.readItem, home, board, window, nowMs, [item]);
    const own = { draining: reply[0] === 1, standing: { score: reply[1], rank: reply[2] || null }, ranked: reply[3] };
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
      const reply = await this.read<Array<string | number>>(S.readAround, board.shards[0], board, window, nowMs, [
        item,
        radius,
      ]);
      return { draining: reply[0] === 1, items: reply[1] === -1 ? [] : listing(reply) };
    }
    const home = board.shardOf(item);
    const own = await this.read<number[]>(S.readItem, home, board, window, nowMs, [item]);
    const score = own[1];
    if (score <= 0) return { draining: own[0] === 1, items: [] };
    const replies = await Promise.all(
      board.shards.map((shard) =>
        this.read<Array<string | number>>(S.readNeighbours, shard, board, window, nowMs, [item, score, radius]),
      ),
    );
    const position = replies.reduce((sum, reply) => sum + Number(reply[1]), 0);
    const above = replies.reduce((sum, reply) => sum + Number(reply[2]), 0);
    const before = mergeListings(replies.map((reply) => pairsOf(reply, 4).slice(0, Number(reply[3])))).slice(-radius);
    const after = mergeListings(replies.map((reply) => pairsOf(reply, 4).slice(Number(reply[3]))))
      .filter((row) => row.score > 0)
      .slice(0, radius);
    const rows: ScoredItem[] = [...before, { item, score }, ...after];
    const firstPosition = position - before.length;
    let higherThanFirst = above;
    if (rows[0].score !== score)
      higherThanFirst =
        firstPosition === 0 ? 0 : (await this.countAbove(board, undefined, [window], nowMs, [rows[0].score])).above[0];
    return {
      draining: own[0] === 1 || replies.some((reply) => reply[0] === 1),
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
    draining: boolean,
    own: Standing[],
  ): Promise<{ draining: boolean; standings: Standing[] }> {
    if (!board.sharded) return { draining, standings: own };
    try {
      const others = await this.countAbove(
        board,
        home,
        board.config.windows,
        nowMs,
        own.map((s) => s.score),
      );
      return {
        draining: draining || others.draining,
        standings: own.map((s, w) => ({ score: s.score, rank: s.rank === null ? null : s.rank + others.above[w] })),
      };
    } catch (error) {
      if (!(error instanceof StaleConfigError || error instanceof BoardGoneError)) throw error;
      throw new ConflictError(
        `board "${board.config.name}" changed during the request: the write was applied, but its board-wide rank could not be read; do not repeat the write, read the item instead`,
      );
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
    const windowArgs = windowArgsOf(windows);
    const replies = await Promise.all(
      shards.map((shard) => {
        const keys = [shard.keys.cfg(), ...windows.flatMap((w) => [shard.keys.slots(w.name), shard.keys.top(w.name)])];
        return this.guard(
          this.redis.run<number[]>(S.countAbove, keys, [
            board.config.version,
            nowMs,
            this.budget,
            ...windowArgs,
            ...scores,
          ]),
        );
      }),
    );
    return {
      draining: replies.some((reply) => reply[0] === 1),
      above: windows.map((_, w) => replies.reduce((sum, reply) => sum + reply[1 + 2 * w], 0)),
      ranked: windows.map((_, w) => replies.reduce((sum, reply) => sum + reply[2 + 2 * w], 0)),
    };
  }

  private read<T>(
    script: typeof S.readTop,
    shard: ShardKeys,
    board: PreparedBoard,
    window: WindowConfig,
    nowMs: number,
    extra: Array<string | number>,
  ): Promise<T> {
    const keys = [shard.keys.cfg(), shard.keys.slots(window.name), shard.keys.top(window.name)];
    return this.guard(
      this.redis.run<T>(script, keys, [
        board.config.version,
        nowMs,
        this.budget,
        window.periodSec,
        window.intervalSec,
        ...extra,
      ]),
    );
  }

  private call<T>(
    script: (typeof S)[keyof typeof S],
    board: PreparedBoard,
    keys: string[],
    nowMs: number,
    extra: Array<string | number>,
  ): Promise<T> {
    return this.guard(
      this.redis.run<T>(script, keys, [board.config.version, nowMs, this.budget, ...board.windowArgs, ...extra]),
    );
  }

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

function standings(reply: number[], first: number): Standing[] {
  const result: Standing[] = [];
  for (let i = first; i < reply.length; i += 2) result.push({ score: reply[i], rank: reply[i + 1] || null });
  return result;
}

/** Turns [draining, firstPosition, higherThanFirst, item, score, ...] into ranked rows. */
function listing(reply: Array<string | number>): ListedItem[] {
  return rankRows(pairsOf(reply, 3), Number(reply[1]), Number(reply[2]));
}

/** The (item, score) pairs of a reply from index `first` on. */
function pairsOf(reply: Array<string | number>, first: number): ScoredItem[] {
  const rows: ScoredItem[] = [];
  for (let i = first; i < reply.length; i += 2) rows.push({ item: String(reply[i]), score: Number(reply[i + 1]) });
  return rows;
}
