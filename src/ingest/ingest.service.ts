import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import Redis, { Cluster } from 'ioredis';
import { Clock } from '../common/clock';
import { AppConfig } from '../common/config';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { BoardCache } from '../ranking/boards/board-cache';
import { RedisService } from '../redis/redis.service';
import { DeclareSourceDto, SourceDeclaration, SourceStatusDto } from './dto/ingest.dto';
import { MAX_INGEST_SOURCES } from './ingest.limits';
import { IngestMetrics } from './ingest.metrics';
import { INGEST_MESSAGES as M } from './ingest.messages';
import { IngestSettings } from './ingest.settings';
import { IngestStore, progressName, StoredSource } from './ingest.store';
import { SourceRunner } from './source-runner';
import { NatsSource } from './sources/nats.source';
import { RedisStreamSource } from './sources/redis-stream.source';

const REDIS_ONLY = ['url', 'group'] as const;
const NATS_ONLY = ['servers', 'subject', 'durable'] as const;

/**
 * Stream sources: declarations kept in Redis for the whole fleet, and on every instance a refresh
 * that starts a runner per declared source and stops those no longer declared. Each runner consumes
 * only while it holds its source's lease, so one instance consumes a source at a time and the others
 * stand by (see docs/ingest.md for why not several at once).
 */
@Injectable()
export class IngestService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Ingest');
  private readonly instance = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private readonly runners = new Map<string, SourceRunner>();
  private timer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly store: IngestStore,
    private readonly boards: BoardCache,
    private readonly redis: RedisService,
    private readonly config: AppConfig,
    private readonly settings: IngestSettings,
    private readonly clock: Clock,
    private readonly metrics: IngestMetrics,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.settings.enabled) return;
    this.timer = setInterval(() => void this.refresh(), this.settings.INGEST_REFRESH_MS);
    this.timer.unref();
    void this.refresh();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.refreshing;
    await Promise.all([...this.runners.values()].map((runner) => runner.stop()));
    this.runners.clear();
  }

  async declare(name: string, body: DeclareSourceDto): Promise<{ created: boolean; source: SourceStatusDto }> {
    const declaration = checked(body);
    const existing = await this.store.get(name);
    if (existing && existing.declaration.kind !== declaration.kind)
      throw new ConflictError('INGEST_SOURCE_CONFLICT', M.kindChanged(name, existing.declaration.kind));
    if (!existing && (await this.store.size()) >= MAX_INGEST_SOURCES)
      throw new ConflictError('INGEST_SOURCES_FULL', M.sourcesFull(MAX_INGEST_SOURCES));
    const same = existing && JSON.stringify(existing.declaration) === JSON.stringify(declaration);
    const stored: StoredSource = same
      ? existing
      : { name, declaration, declaredAt: Math.floor(this.clock.nowMs() / 1000) };
    if (!same) await this.store.put(stored);
    void this.refresh();
    return { created: !existing, source: await this.status(stored) };
  }

  async list(): Promise<SourceStatusDto[]> {
    return Promise.all((await this.store.list()).map((stored) => this.status(stored)));
  }

  async delete(name: string): Promise<void> {
    if (!(await this.store.delete(name))) throw new NotFoundError('INGEST_SOURCE_NOT_FOUND', M.sourceNotFound(name));
    void this.refresh();
  }

  private async status(stored: StoredSource): Promise<SourceStatusDto> {
    const totals = await this.store.totals(stored.name);
    return {
      name: stored.name,
      declaration: stored.declaration,
      declaredAt: stored.declaredAt,
      applied: totals.applied,
      deadLettered: totals.deadLettered,
      lag: totals.lag,
      lastError: totals.lastError,
      lastErrorAt: totals.lastErrorAt,
      consumer: totals.leader,
    };
  }

  /** Starts runners of new or changed declarations, stops those of deleted or changed ones. */
  refresh(): Promise<void> {
    if (!this.settings.enabled) return Promise.resolve();
    this.refreshing ??= this.reconcile()
      .catch((error: unknown) => {
        // While Redis is away the outage has been logged once already (RedisService): no line per refresh.
        if (this.redis.down) this.logger.debug(`declarations not read (Redis is down): ${String(error)}`);
        else this.logger.warn(`declarations not read: ${String(error)}`);
      })
      .finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async reconcile(): Promise<void> {
    const declared = new Map((await this.store.list()).map((stored) => [stored.name, stored]));
    for (const [name, runner] of this.runners) {
      const now = declared.get(name);
      if (now && JSON.stringify(now) === JSON.stringify(runner.stored)) continue;
      this.runners.delete(name);
      await runner.stop();
      this.metrics.forget(name);
    }
    for (const [name, stored] of declared) {
      if (this.runners.has(name)) continue;
      const runner = new SourceRunner(stored, this.sourceOf(stored), progressName(name, stored.declaration), {
        store: this.store,
        boards: this.boards,
        instance: this.instance,
        nowMs: () => this.clock.nowMs(),
        budgetFields: this.config.EXPIRE_CHUNK,
        batch: this.settings.INGEST_BATCH,
        waitMs: this.settings.INGEST_WAIT_MS,
        leaseMs: this.settings.INGEST_LEASE_MS,
        admit: () => this.admit(),
        observe: (source, figures) => this.metrics.observe(source, figures),
      });
      this.runners.set(name, runner);
      runner.start();
    }
  }

  private sourceOf(stored: StoredSource) {
    const declaration = stored.declaration;
    if (declaration.kind === 'nats') return new NatsSource(stored.name, declaration);
    return new RedisStreamSource(stored.name, declaration, this.instance, (url) => this.connect(url));
  }

  /** A connection of the source's own (blocking reads), without the service's command timeout. */
  private connect(url: string | undefined): Redis | Cluster {
    const options = { maxRetriesPerRequest: 1, connectTimeout: 2000 };
    if (url !== undefined) return new Redis(url, options);
    const nodes = this.config.REDIS_CLUSTER_NODES;
    if (!nodes) return new Redis(this.config.REDIS_URL, options);
    const startup = nodes.split(',').map((node) => ({ host: node.split(':')[0], port: Number(node.split(':')[1]) }));
    return new Cluster(startup, { redisOptions: options });
  }

  /**
   * Waits for a place among INGEST_MAX_IN_FLIGHT batches, and while the service's Redis connection
   * is backlogged (the HTTP requests' threshold): ingest yields to requests, never the reverse.
   */
  private async admit(): Promise<() => void> {
    while (this.inFlight >= this.settings.INGEST_MAX_IN_FLIGHT)
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight++;
    while (this.redis.busy) await new Promise((resolve) => setTimeout(resolve, 5));
    return () => {
      this.inFlight--;
      this.waiting.shift()?.();
    };
  }
}

/** The declaration with only its kind's fields; a field of the other kind, or a missing one, is a 400. */
function checked(body: DeclareSourceDto): SourceDeclaration {
  const foreign = body.kind === 'nats' ? REDIS_ONLY : NATS_ONLY;
  for (const field of foreign) if (body[field] !== undefined) throw new InvalidInputError(M.fieldFor(field, body.kind));
  const common = {
    stream: body.stream,
    ...(body.board === undefined ? {} : { board: body.board }),
    ...(body.deadLetter === undefined ? {} : { deadLetter: body.deadLetter }),
  };
  if (body.kind === 'redis-stream')
    return {
      kind: 'redis-stream',
      ...common,
      ...(body.url === undefined ? {} : { url: body.url }),
      ...(body.group === undefined ? {} : { group: body.group }),
    };
  if (body.servers === undefined) throw new InvalidInputError(M.fieldNeeded('servers', 'nats'));
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(body.stream))
    throw new InvalidInputError('stream must be a JetStream stream name: 1-64 characters of A-Z a-z 0-9 _ -');
  return {
    kind: 'nats',
    servers: body.servers,
    ...common,
    ...(body.subject === undefined ? {} : { subject: body.subject }),
    ...(body.durable === undefined ? {} : { durable: body.durable }),
  };
}
