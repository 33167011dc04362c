import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { PreparedBoard, ShardKeys } from '../ranking/core/board';
import { RankingKeys } from '../ranking/core/ranking.keys';
import { RedisService } from '../redis/redis.service';
import { RedisFunctions } from '../redis/redis-functions';
import type { LibraryFunction } from '../redis/function-library';
import { APPLIED, ApplyReply, EntryOutcome, INGEST, IngestEntry } from './ingest.functions';
import { groupsOf } from './ingest-groups';
import type { SourceDeclaration } from './dto/ingest.dto';
import { BoardGoneError, StaleConfigError } from '../ranking/core/ranking.errors';
import { keptScore } from '../ranking/options/registry';

const S = INGEST.functions;

/** The source's lease passed to another instance, which wrote to this shard already: nothing applied. */
export class IngestFencedError extends Error {}

/** One board shard's part of a batch, as the source's lease holder (`epoch`) applies it. */
export interface ShardPart {
  board: PreparedBoard;
  shard: ShardKeys;
  /** The source's progress name (progressName). */
  progress: string;
  epoch: number;
  entries: IngestEntry[];
  nowMs: number;
  budgetFields: number;
}

/** A declaration as stored: what the admin sent, and when. */
export interface StoredSource {
  name: string;
  declaration: SourceDeclaration;
  declaredAt: number;
}

export interface SourceTotals {
  applied: number;
  deadLettered: number;
  lag: number | null;
  throughput: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  leader: string | null;
}

/**
 * The ingest feature's Redis keys and calls. Fleet-wide state lives under one hash tag:
 *   {<prefix>ingest}:sources            hash  name -> declaration JSON (every instance reads it)
 *   {<prefix>ingest}:stats:<name>       hash  applied, deadLettered, lag, throughput, lastError, lastErrorAt
 *   {<prefix>ingest}:lease:<name>       string "<instance> <epoch>": who consumes the source now
 *   {<prefix>ingest}:epoch:<name>       counter of lease epochs (never deleted: epochs only grow)
 * Progress lives with the data it guards, under each board shard's tag (ingest_apply.lua):
 *   {<prefix>board:<board>[/k]}:ingest:<name>:<stream identity>   hash  last, epoch, applied, r:<id>
 */
@Injectable()
export class IngestStore {
  private readonly tag: string;
  /** The ranking's key names: the due index a write enters a board into. */
  private readonly rankingKeys: RankingKeys;

  constructor(
    private readonly redis: RedisService,
    private readonly functions: RedisFunctions,
  ) {
    this.tag = `{${redis.prefix}ingest}`;
    this.rankingKeys = new RankingKeys(redis.prefix);
    functions.define([INGEST.library]);
  }

  private get client() {
    return this.redis.client;
  }

  async list(): Promise<StoredSource[]> {
    const stored = await this.redis.timed(this.client.hgetall(`${this.tag}:sources`));
    return Object.values(stored)
      .map((json) => JSON.parse(json) as StoredSource)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async size(): Promise<number> {
    return this.redis.timed(this.client.hlen(`${this.tag}:sources`));
  }

  async get(name: string): Promise<StoredSource | undefined> {
    const json = await this.redis.timed(this.client.hget(`${this.tag}:sources`, name));
    return json === null ? undefined : (JSON.parse(json) as StoredSource);
  }

  async put(source: StoredSource): Promise<void> {
    await this.redis.timed(this.client.hset(`${this.tag}:sources`, source.name, JSON.stringify(source)));
  }

  /** Removes the declaration, its totals and its lease (the holder stops at its next renewal); false when unknown. */
  async delete(name: string): Promise<boolean> {
    const removed = await this.redis.timed(this.client.hdel(`${this.tag}:sources`, name));
    await this.redis.timed(this.client.del(`${this.tag}:stats:${name}`, `${this.tag}:lease:${name}`));
    return removed === 1;
  }

  async totals(name: string): Promise<SourceTotals> {
    const [stats, lease] = await Promise.all([
      this.redis.timed(this.client.hgetall(`${this.tag}:stats:${name}`)),
      this.redis.timed(this.client.get(`${this.tag}:lease:${name}`)),
    ]);
    return {
      applied: Number(stats.applied ?? 0),
      deadLettered: Number(stats.deadLettered ?? 0),
      lag: stats.lag === undefined ? null : Number(stats.lag),
      throughput: stats.throughput === undefined ? null : Number(stats.throughput),
      lastError: stats.lastError ?? null,
      lastErrorAt: stats.lastErrorAt === undefined ? null : Number(stats.lastErrorAt),
      leader: lease === null ? null : lease.split(' ')[0],
    };
  }

  /** Adds to the fleet-wide totals (kept only while the source is declared). */
  async addTotals(name: string, applied: number, deadLettered: number): Promise<void> {
    if (applied === 0 && deadLettered === 0) return;
    const key = `${this.tag}:stats:${name}`;
    if (!(await this.declared(name))) return;
    await this.redis.timed(
      this.client.multi().hincrby(key, 'applied', applied).hincrby(key, 'deadLettered', deadLettered).exec(),
    );
  }

  /** The lag and throughput (events/s) the consuming instance measured last. */
  async recordFigures(name: string, lag: number, throughput: number): Promise<void> {
    if (await this.declared(name))
      await this.redis.timed(this.client.hset(`${this.tag}:stats:${name}`, 'lag', lag, 'throughput', throughput));
  }

  async recordError(name: string, error: string, atSec: number): Promise<void> {
    if (await this.declared(name))
      await this.redis.timed(
        this.client.hset(`${this.tag}:stats:${name}`, 'lastError', error.slice(0, 500), 'lastErrorAt', atSec),
      );
  }

  private async declared(name: string): Promise<boolean> {
    return (await this.redis.timed(this.client.hexists(`${this.tag}:sources`, name))) === 1;
  }

  /** Takes or renews the source's lease: the epoch while this instance holds it, 0 when another does. */
  lease(name: string, instance: string, leaseMs: number, release = false): Promise<number> {
    return this.functions.call(S.lease, {
      lease: `${this.tag}:lease:${name}`,
      epochKey: `${this.tag}:epoch:${name}`,
      instance,
      leaseMs,
      release,
    });
  }

  /**
   * One shard's part of a batch, applied with the source's progress on that shard in one script call:
   * summed per group when the part is fresh and every group is accepted (ingest_groups), else entry
   * by entry (ingest_apply, which answers each entry's outcome).
   */
  async apply(part: ShardPart): Promise<ApplyReply> {
    const base = { ...part, progressKey: `${part.shard.keys.tag}:ingest:${part.progress}` };
    let reply: ApplyReply | undefined;
    // Entries sent again resolved are applied by their own marks, entry by entry.
    if (keptScore(part.board.config) === undefined && !part.entries.some((entry) => entry.resolved)) {
      const summed = await this.call(S.groups, { ...base, ...groupsOf(part.entries) });
      if (summed) reply = { ...summed, outcomes: new Array<EntryOutcome>(part.entries.length).fill(APPLIED) };
    }
    reply ??= await this.call(S.apply, base);
    if (reply.dueMs > 0)
      // As a ranking write does: the scheduler visits the board when its new slot is due.
      await this.redis.timed(this.client.zadd(this.rankingKeys.dueIndex(), 'LT', reply.dueMs, part.board.config.name));
    return reply;
  }

  /** Runs an ingest function, its refusals as the errors BoardCache handles (reload the config, run again), and fencing. */
  private call<In, Out>(fn: LibraryFunction<In, Out>, input: In): Promise<Out> {
    return this.functions.call(fn, input).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : '';
      if (message.startsWith('TB_NO_BOARD')) throw new BoardGoneError(message);
      if (message.startsWith('TB_STALE_CONFIG')) throw new StaleConfigError(message);
      if (message.startsWith('TB_INGEST_FENCED')) throw new IngestFencedError(message);
      throw error;
    });
  }

  /** Clears a refusal remembered for a message once its dead letter is written. */
  async forgetRefusal(shard: ShardKeys, progress: string, id: string): Promise<void> {
    await this.redis.timed(this.client.hdel(`${shard.keys.tag}:ingest:${progress}`, `r:${id}`));
  }

  /** Clears a message's x:<id> (applied resolved) once it is acknowledged. */
  async forgetResolved(shard: ShardKeys, progress: string, id: string): Promise<void> {
    await this.redis.timed(this.client.hdel(`${shard.keys.tag}:ingest:${progress}`, `x:${id}`));
  }
}

/**
 * What names a source's progress: its name and the identity of the stream it reads, so a source
 * declared again on the same stream resumes, and one moved to another stream starts afresh.
 */
export function progressName(name: string, declaration: SourceDeclaration): string {
  const identity =
    declaration.kind === 'redis-stream'
      ? [declaration.kind, declaration.url ?? '', declaration.stream, declaration.group ?? 'trendboard']
      : [declaration.kind, declaration.stream, declaration.subject ?? '', declaration.durable ?? 'trendboard'];
  return `${name}:${createHash('sha1').update(identity.join('\n')).digest('hex').slice(0, 12)}`;
}
