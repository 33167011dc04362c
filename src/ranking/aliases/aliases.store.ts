import { Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { PreparedBoard } from '../core/board';
import { guard } from '../core/ranking.errors';
import { RankingKeys } from '../core/ranking.keys';
import { AliasesFunctions, AliasPutCall, AliasPutReply, AliasStepCall, AliasStepReply } from './aliases.functions';
import { sliceStore } from '../core/slice-store';

/** A merge's record on the alias's shard as stored (absent fields: none, or expired). */
export interface AliasRecord {
  item?: string;
  run?: string;
  state?: string;
  entries?: string;
}

/** A put's own fields: the store adds the board's shard 0, the expiry budget. */
export type AliasPut = Omit<AliasPutCall, 'board' | 'shard' | 'budgetFields'>;

/** A step's own fields: the store adds the shard (the alias's for a take, the item's for a give) and the record. */
export type AliasStep = Omit<AliasStepCall, 'board' | 'shard' | 'budgetFields' | 'record'>;

/** Ids may hold any printable character: a record's key names a digest of the alias instead. */
export function aliasDigest(alias: string): string {
  return createHash('sha256').update(alias).digest('hex').slice(0, 32);
}

const US = '\u001f';

/** Aliases in Redis: the map on shard 0, the merges' steps and records, the merges left running. */
@Injectable()
export class AliasesStore extends sliceStore(AliasesFunctions) {
  private readonly logger = new Logger('Aliases');
  private readonly keys = new RankingKeys(this.redis.prefix);

  put(board: PreparedBoard, put: AliasPut): Promise<AliasPutReply> {
    const call = { ...put, board, shard: board.shards[0], budgetFields: this.budgetFields };
    return guard(this.functions.call(this.fns.aliasPut, call));
  }

  /** A take on the alias's shard, or a give on the canonical item's. */
  async step(board: PreparedBoard, step: AliasStep): Promise<AliasStepReply> {
    const shard = board.shardOf(step.mode === 'take' ? step.alias : step.item);
    const digest = aliasDigest(step.alias);
    const record = step.mode === 'take' ? shard.keys.aliasMerge(digest) : shard.keys.aliasGiven(digest);
    const call = { ...step, board, shard, record, budgetFields: this.budgetFields };
    const reply = await guard(this.functions.call(this.fns.aliasStep, call));
    if (reply.dueMs > 0) await this.indexDue(board, reply.dueMs);
    return reply;
  }

  /** The board's aliases (alias -> canonical item), as shard 0 holds them. */
  async map(board: PreparedBoard): Promise<ReadonlyMap<string, string>> {
    const stored = await this.redis.timed(this.redis.client.hgetall(board.shards[0].keys.aliases()));
    return new Map(Object.entries(stored));
  }

  /** The alias's canonical item and merge run as shard 0 holds them (undefined: no such alias). */
  async lookup(board: PreparedBoard, alias: string): Promise<{ item: string; run: string } | undefined> {
    const keys = board.shards[0].keys;
    const [item, run] = await Promise.all([
      this.redis.timed(this.redis.client.hget(keys.aliases(), alias)),
      this.redis.timed(this.redis.client.hget(keys.aliasRuns(), alias)),
    ]);
    return item === null || run === null ? undefined : { item, run };
  }

  /** The merge's record on the alias's shard. */
  record(board: PreparedBoard, alias: string): Promise<AliasRecord> {
    const key = board.shardOf(alias).keys.aliasMerge(aliasDigest(alias));
    return this.redis.timed(this.redis.client.hgetall(key));
  }

  /** Notes a merge as running (until `finished`), for instances that start later to resume. */
  async running(board: string, alias: string, nowMs: number): Promise<void> {
    await this.redis.timed(this.redis.client.zadd(this.keys.aliasesRunning(), nowMs, `${board}${US}${alias}`));
  }

  async finished(board: string, alias: string): Promise<void> {
    await this.redis.timed(this.redis.client.zrem(this.keys.aliasesRunning(), `${board}${US}${alias}`));
  }

  /** The merges noted as running (at most `most`, oldest first): [board, alias]. */
  async runningOnes(most: number): Promise<Array<[string, string]>> {
    const members = await this.redis.timed(this.redis.client.zrange(this.keys.aliasesRunning(), 0, most - 1));
    return members.map((member) => {
      const cut = member.indexOf(US);
      return [member.slice(0, cut), member.slice(cut + 1)];
    });
  }

  /** Runs `listener` once the connection to Redis is ready again. */
  onceConnected(listener: () => void): void {
    this.redis.onceReady(listener);
  }

  /** A slot a give indexed: the scheduler's due index moves that early (as a write's does). */
  private async indexDue(board: PreparedBoard, dueMs: number): Promise<void> {
    await this.redis
      .timed(this.redis.client.zadd(this.keys.dueIndex(), 'LT', dueMs, board.config.name))
      .catch((error: unknown) =>
        this.logger.warn(`due index not updated for "${board.config.name}": ${String(error)}`),
      );
  }
}
