import { redisFailureInWords } from '../../common/redis-errors';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Clock, SystemClock } from '../../common/clock';
import { RedisService } from '../../redis/redis.service';
import { RedisFunctions } from '../../redis/redis-functions';
import { aggregateOf } from '../options/aggregate/aggregate';
import { BoardConfig, PreparedBoard } from '../core/board';
import { RankingKeys } from '../core/ranking.keys';
import { optionsFromStored, optionsOf } from '../options/registry';
import type { PutBoardResult } from '../core/board';
import type { PutBoardCommand } from '../core/ranking.types';
import type { ViewConfig } from '../options/views/trending-math';
import type { WindowConfig } from '../core/window-math';
import { RankingSettings } from '../core/ranking.settings';
import { BOARD_DROP_KEYS_PER_REQUEST, PRUNE_ENTRIES_PER_CALL } from '../core/ranking.limits';
import { BoardDrops } from './board-drops';
import { BoardsFunctions } from './boards.functions';
import { windowsFromStored } from './stored-windows';

/** A run of prune steps (BoardsStore.prune). */
export interface PruneCommand {
  name: string;
  /** The shards to prune, by index. */
  shards: number[];
  /** Most steps a shard (Number.POSITIVE_INFINITY: till done). */
  mostSteps: number;
  nowMs: number;
}

/** Board configs and the registry of board names: load, PUT, DELETE, paging, the legacy registry's migration. */
@Injectable()
export class BoardsStore implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly keys: RankingKeys;
  /** Deleted boards' keys, dropped in bounded steps. */
  readonly drops: BoardDrops;
  private readonly fns: BoardsFunctions['functions'];

  constructor(
    private readonly redis: RedisService,
    private readonly functions: RedisFunctions,
    part: BoardsFunctions,
    settings: RankingSettings,
    /** The time a drop resumed at start detaches with (a bench or spec without one: the system's). */
    private readonly clock: Clock = new SystemClock(),
  ) {
    this.keys = new RankingKeys(redis.prefix);
    this.fns = part.functions;
    this.drops = new BoardDrops(redis, functions, this.fns, this.keys, settings.idempotencyRetentionMs);
    functions.define([part.library]);
  }

  /** Resumes the drops a stopped instance left (a Redis away: the scheduler's sweep resumes them). */
  async onApplicationBootstrap(): Promise<void> {
    await this.drops
      .resume(this.clock.nowMs())
      .catch((error: unknown) =>
        new Logger('BoardDrops').warn(
          `drops of deleted boards not resumed at start: ${redisFailureInWords(error)}; the scheduler's sweep resumes them`,
        ),
      );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.drops.stop();
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
      windows: windowsFromStored(stored.windows),
      maxItems: stored.maxItems ? Number(stored.maxItems) : null,
      views: stored.views ? (JSON.parse(stored.views) as ViewConfig[]) : [],
      ...optionsFromStored(stored),
      aggregate: aggregateOf(stored.aggregate),
    };
  }

  /** Configs of some boards in parallel (undefined where a listed name has no board). */
  loadBoards(names: string[]): Promise<Array<BoardConfig | undefined>> {
    return Promise.all(names.map((name) => this.loadBoard(name)));
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

  /** Names of the registry after `after` (byte order; '' for the first page), at most `limit`. */
  registryPageAfter(after: string, limit: number): Promise<string[]> {
    const from = after === '' ? '-' : `(${after}`;
    return this.redis.timed(this.redis.client.zrange(this.keys.boardRegistry(), from, '+', 'BYLEX', 'LIMIT', 0, limit));
  }

  /**
   * The registry entry comes first, so a board never exists unlisted (the scheduler walks the registry),
   * and is written again once the board is created, in case a racing DELETE unlisted it (see unregister).
   * Shard 0 decides (one atomic script); then every other shard gets a copy of its config, and shards
   * beyond the count (up to the most the board ever had) are deleted. A repeated PUT repairs whatever a
   * failed one left behind.
   */
  async putBoard(command: PutBoardCommand): Promise<PutBoardResult> {
    const { name, nowMs } = command;
    await this.register(name);
    // A reset's prune steps (prune below) left by a stopped instance are the scheduler's visit's to end.
    if (command.reset) await this.redis.timed(this.redis.client.zadd(this.keys.dueIndex(), 'LT', nowMs, name));
    const reply = await this.functions.call(this.fns.boardPut, { ...command, keys: this.keys.board(name) });
    if (reply.status === 'conflict') {
      // A refused PUT over a board still being dropped must not leave the name listed.
      if (reply.dropping) await this.unregister(name);
      return reply;
    }
    if (reply.status === 'created') await this.register(name);
    const config: BoardConfig = {
      name,
      version: reply.version,
      shards: reply.shards,
      windows: JSON.parse(reply.windowsJson) as WindowConfig[],
      maxItems: reply.maxItems,
      views: JSON.parse(reply.viewsJson) as ViewConfig[],
      ...optionsOf(reply),
      aggregate: reply.aggregate,
    };
    await Promise.all(
      Array.from({ length: reply.shards - 1 }, (_, i) =>
        this.functions.call(this.fns.shardSync, { keys: this.keys.board(name, i + 1), ...reply, nowMs }),
      ),
    );
    if (reply.shards > 1) await this.dropLateCopies(name, reply.shards, nowMs);
    if (reply.mostShards > reply.shards) {
      // Shards beyond the count: dropped in bounded steps, all of them before the PUT answers.
      const drop = await this.drops.note({ name, fromShard: reply.shards, mostShards: reply.mostShards }, nowMs);
      await this.drops.drive(drop, Number.POSITIVE_INFINITY, nowMs);
    }
    // A repeated PUT also ends the prune of one that stopped half way (its steps are safe to repeat).
    if (reply.status !== 'created') {
      const shards = Array.from({ length: reply.shards }, (_, shard) => shard);
      await this.prune({ name, shards, mostSteps: Number.POSITIVE_INFINITY, nowMs });
    }
    return { status: reply.status, config };
  }

  /**
   * What a reset left the options to prune on `shards` (the groups maps, item data: prune_step.lua), in
   * steps of about PRUNE_ENTRIES_PER_CALL entries, shards side by side, at most `mostSteps` a shard: the
   * PUT all of them before it answers, the scheduler's visit (a PUT's instance stopped) a bounded share,
   * a moderation change all of them before it counts a group's items. A step on a shard with nothing to
   * prune answers done at once; steps are safe to repeat and to run on two instances at once (the cursors
   * are in the config hash). Answers whether every shard is done.
   */
  async prune(command: PruneCommand): Promise<boolean> {
    const { name, shards, mostSteps, nowMs } = command;
    const done = await Promise.all(
      shards.map(async (shard) => {
        const keys = this.keys.board(name, shard);
        for (let steps = 0; steps < mostSteps; steps++)
          if (await this.functions.call(this.fns.pruneStep, { keys, entries: PRUNE_ENTRIES_PER_CALL, nowMs }))
            return true;
        return false;
      }),
    );
    return done.every(Boolean);
  }

  /**
   * A DELETE that ran while this PUT copied shard 0's config: a shard copied after its drop ended holds
   * the board again, which no drop would ever reach. Shard 0 without a config says so: the copies go
   * as a drop of their own (noted first, so a crash leaves it to resume).
   */
  private async dropLateCopies(name: string, shards: number, nowMs: number): Promise<void> {
    if ((await this.redis.timed(this.redis.client.hexists(this.keys.board(name).cfg(), 'windows'))) === 1) return;
    const drop = await this.drops.note({ name, fromShard: 1, mostShards: shards }, nowMs);
    await this.drops.drive(drop, Number.POSITIVE_INFINITY, nowMs);
  }

  /**
   * Deletes the board at once for every read and write: the drop is noted, each shard it ever had is
   * detached (shard 0 first: the board is gone from then on). Its keys are then dropped in bounded
   * steps: up to BOARD_DROP_KEYS_PER_REQUEST before the registry entry goes, the rest in the background
   * (board-drops.ts). A PUT of the name is refused until every key is gone.
   */
  async deleteBoard(name: string, nowMs: number): Promise<boolean> {
    const cfg = await this.redis.timed(
      this.redis.client.hmget(this.keys.board(name).cfg(), 'shards', 'maxShards', 'windows'),
    );
    if (cfg[2] === null) return false;
    const mostShards = Math.max(Number(cfg[0] ?? 1), Number(cfg[1] ?? 1));
    const drop = await this.drops.note({ name, fromShard: 0, mostShards }, nowMs);
    if (!(await this.drops.detach(name, 0, nowMs))) {
      await this.drops.forget(drop);
      return false;
    }
    for (let shard = 1; shard < mostShards; shard++) await this.drops.detach(name, shard, nowMs);
    const dropped = await this.drops.drive(drop, BOARD_DROP_KEYS_PER_REQUEST, nowMs, true);
    await this.unregister(name);
    // Tidiness only: a due entry left behind costs one visit, which finds no board and drops it.
    await this.redis.timed(this.redis.client.zrem(this.keys.dueIndex(), name));
    if (!dropped) this.drops.launch(drop, nowMs);
    return true;
  }

  /** Removes a registry entry whose board has no config (left behind by a put that failed half way, or a race). */
  async unregisterIfMissing(name: string): Promise<void> {
    if ((await this.loadBoard(name)) === undefined) await this.unregister(name);
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

  /** The board's change version: the sum of its shards' (each write bumps its own shard's). One read per shard. */
  async changeVersion(board: PreparedBoard): Promise<number> {
    const versions = await Promise.all(
      board.shards.map((shard) => this.redis.timed(this.redis.client.hget(shard.keys.cfg(), 'ver'))),
    );
    return versions.reduce((sum, version) => sum + Number(version ?? 0), 0);
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
}
