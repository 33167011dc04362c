import { Injectable } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { RedisService } from '../redis/redis.service';
import { BoardConfig, PreparedBoard } from './board';
import { RANKING_SCRIPTS as S } from './ranking.scripts';
import { WindowConfig, WindowSpec } from './window-math';

/** A script refused a write because the board is gone or its config changed since it was cached. */
export class BoardGoneError extends Error {}
export class StaleConfigError extends Error {}

/** Score and competition rank of an item in one window (rank null: not ranked). */
export interface Standing {
  score: number;
  rank: number | null;
}

export interface ListedItem {
  rank: number;
  item: string;
  score: number;
}

export type PutBoardResult =
  | { status: 'created' | 'updated' | 'unchanged'; config: BoardConfig }
  | { status: 'conflict'; message: string };

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
    return new PreparedBoard(config, this.redis.keys.board(config.name));
  }

  async loadBoard(name: string): Promise<BoardConfig | undefined> {
    const stored = await this.redis.client.hgetall(this.redis.keys.board(name).cfg());
    if (!stored.version || !stored.windows) return undefined;
    return { name, version: stored.version, shards: Number(stored.shards), windows: JSON.parse(stored.windows) as WindowConfig[] };
  }

  async listBoardNames(): Promise<string[]> {
    return this.redis.client.smembers(this.redis.keys.boardRegistry());
  }

  /** The registry entry comes first, so a board never exists unlisted (the scheduler walks the registry). */
  async putBoard(name: string, windows: WindowSpec[], shards: number, reset: boolean, version: string, nowMs: number): Promise<PutBoardResult> {
    await this.redis.client.sadd(this.redis.keys.boardRegistry(), name);
    const keys = this.redis.keys.board(name);
    const reply = await this.redis.run<string[]>(S.boardPut, [keys.cfg()], [JSON.stringify(windows), shards, version, reset ? 1 : 0, nowMs]);
    if (reply[0] === 'conflict') return { status: 'conflict', message: reply[1] };
    return {
      status: reply[0] as 'created' | 'updated' | 'unchanged',
      config: { name, version: reply[1], shards, windows: JSON.parse(reply[2]) as WindowConfig[] },
    };
  }

  /** Deletes every key of the board, then its registry entry. */
  async deleteBoard(name: string): Promise<boolean> {
    const keys = this.redis.keys.board(name);
    const existed = await this.redis.run<number>(S.boardDelete, [keys.cfg(), keys.likes()], []);
    await this.redis.client.srem(this.redis.keys.boardRegistry(), name);
    return existed === 1;
  }

  /** Removes a registry entry whose board has no config (left behind by a put that failed half way). */
  async unregisterIfMissing(name: string): Promise<void> {
    if ((await this.loadBoard(name)) === undefined) await this.redis.client.srem(this.redis.keys.boardRegistry(), name);
  }

  async increment(board: PreparedBoard, nowMs: number, item: string, amount: number): Promise<{ draining: boolean; standings: Standing[] }> {
    const reply = await this.call<number[]>(S.increment, board, board.incrementKeys, nowMs, [item, amount]);
    return { draining: reply[0] === 1, standings: standings(reply, 1) };
  }

  async incrementBatch(board: PreparedBoard, nowMs: number, entries: Array<{ item: string; amount: number }>): Promise<{ draining: boolean; applied: number }> {
    const pairs = entries.flatMap((e) => [e.item, e.amount]);
    const reply = await this.call<number[]>(S.incrementBatch, board, board.incrementKeys, nowMs, pairs);
    return { draining: reply[0] === 1, applied: reply[1] };
  }

  async like(board: PreparedBoard, nowMs: number, item: string, userId: string, undo: boolean): Promise<{ draining: boolean; counted: boolean; standings: Standing[] }> {
    const reply = await this.call<number[]>(S.like, board, board.allKeys, nowMs, [item, userId, undo ? 1 : 0]);
    return { draining: reply[0] === 1, counted: reply[1] === 1, standings: standings(reply, 2) };
  }

  /** Expires every window of the board once (bounded by the chunk size); true while expired data remains. */
  async expire(board: PreparedBoard, nowMs: number): Promise<boolean> {
    return (await this.call<number>(S.expire, board, board.allKeys, nowMs, [])) === 1;
  }

  async top(board: PreparedBoard, window: WindowConfig, nowMs: number, offset: number, limit: number): Promise<{ draining: boolean; items: ListedItem[] }> {
    const reply = await this.read<Array<string | number>>(S.readTop, board, window, nowMs, [offset, limit]);
    return { draining: reply[0] === 1, items: listing(reply) };
  }

  async item(board: PreparedBoard, window: WindowConfig, nowMs: number, item: string): Promise<{ draining: boolean; standing: Standing; ranked: number }> {
    const reply = await this.read<number[]>(S.readItem, board, window, nowMs, [item]);
    return { draining: reply[0] === 1, standing: { score: reply[1], rank: reply[2] || null }, ranked: reply[3] };
  }

  async around(board: PreparedBoard, window: WindowConfig, nowMs: number, item: string, radius: number): Promise<{ draining: boolean; items: ListedItem[] }> {
    const reply = await this.read<Array<string | number>>(S.readAround, board, window, nowMs, [item, radius]);
    return { draining: reply[0] === 1, items: reply[1] === -1 ? [] : listing(reply) };
  }

  private read<T>(script: typeof S.readTop, board: PreparedBoard, window: WindowConfig, nowMs: number, extra: Array<string | number>): Promise<T> {
    const keys = [board.keys.cfg(), board.keys.slots(window.name), board.keys.top(window.name)];
    return this.guard(this.redis.run<T>(script, keys, [board.config.version, nowMs, this.budget, window.periodSec, window.intervalSec, ...extra]));
  }

  private call<T>(script: (typeof S)[keyof typeof S], board: PreparedBoard, keys: string[], nowMs: number, extra: Array<string | number>): Promise<T> {
    return this.guard(this.redis.run<T>(script, keys, [board.config.version, nowMs, this.budget, ...board.windowArgs, ...extra]));
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

/**
 * Turns [draining, firstPosition, higherThanFirst, item, score, ...] into ranked rows. Competition ranks:
 * a row ties the previous one's rank when scores are equal, else its rank is its 1-based position.
 */
function listing(reply: Array<string | number>): ListedItem[] {
  const items: ListedItem[] = [];
  const higherThanFirst = Number(reply[2]);
  for (let i = 3, position = Number(reply[1]); i < reply.length; i += 2, position++) {
    const score = Number(reply[i + 1]);
    const previous = items[items.length - 1];
    const rank = previous === undefined ? higherThanFirst + 1 : previous.score === score ? previous.rank : position + 1;
    items.push({ rank, item: String(reply[i]), score });
  }
  return items;
}
