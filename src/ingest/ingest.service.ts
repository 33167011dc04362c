import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import Redis, { Cluster } from 'ioredis';
import { Clock } from '../common/clock';
import { ConflictError, InvalidInputError, NotFoundError, RedisUnavailableError } from '../common/errors';
import { AliasMap } from '../ranking/aliases/alias-map';
import { BoardCache } from '../ranking/boards/board-cache';
import { RedisService } from '../redis/redis.service';
import { DeclareSourceDto, SourceDeclaration, SourceStatusDto } from './dto/ingest.dto';
import { checkedDeclaration, ConfiguredSource, ConfiguredSources } from './ingest-config';
import { IngestHosts } from './ingest-hosts';
import { MAX_INGEST_SOURCES } from './ingest.limits';
import { IngestMetrics } from './ingest.metrics';
import { INGEST_MESSAGES as M } from './ingest.messages';
import { IngestSettings } from './ingest.settings';
import { IngestStore, progressName, StoredSource } from './ingest.store';
import { SourceRunner } from './source-runner';
import { NatsSource } from './sources/nats.source';
import { RedisStreamSource } from './sources/redis-stream.source';
import { RankingSettings } from '../ranking/core/ranking.settings';
import { RedisSettings } from '../redis/redis.settings';

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
  /** A refresh was asked for while one ran (it may have read the declarations before the change). */
  private refreshAgain = false;
  /** Refreshes started so far: names a refresh started before their delete must not start again. */
  private refreshesStarted = 0;
  /** Sources deleted through this instance, by the count of refreshes started when deleted. */
  private readonly deletedAt = new Map<string, number>();
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  /** Configured sources not declared yet (Redis away at boot): tried again at each refresh. */
  private readonly toDeclare: Set<ConfiguredSource>;
  /** Where a source may connect (INGEST_ALLOWED_HOSTS): a declaration elsewhere is a 400, and never started. */
  private readonly hosts: IngestHosts;
  /** Sources already logged as declared for a host not allowed (one line each, not one per refresh). */
  private readonly refusedLogged = new Set<string>();

  constructor(
    private readonly store: IngestStore,
    private readonly boards: BoardCache,
    private readonly redis: RedisService,
    private readonly ranking: RankingSettings,
    private readonly redisSettings: RedisSettings,
    private readonly settings: IngestSettings,
    private readonly clock: Clock,
    private readonly metrics: IngestMetrics,
    private readonly aliases: AliasMap,
    configured: ConfiguredSources,
  ) {
    this.toDeclare = new Set(configured.sources);
    this.hosts = new IngestHosts({
      setting: settings.INGEST_ALLOWED_HOSTS,
      redisUrl: redisSettings.url,
      clusterNodes: redisSettings.clusterNodes,
      configured: configured.sources.map((source) => source.declaration),
    });
  }

  onApplicationBootstrap(): void {
    // An instance that consumes nothing still declares its configured sources for the others.
    if (!this.settings.enabled && this.toDeclare.size === 0) return;
    const tick = () => void this.declareConfigured().then(() => this.refresh());
    this.timer = setInterval(tick, this.settings.INGEST_REFRESH_MS);
    this.timer.unref();
    tick();
  }

  /**
   * Stops the periodic refresh, for a caller that refreshes itself (the worst-case harness: no timer
   * fires inside a measured row). A declaration or delete through this instance still refreshes.
   */
  takeOverRefreshes(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Whether the periodic refresh runs (an instance with ingest off and nothing to declare never starts it). */
  get refreshesOnTimer(): boolean {
    return this.timer !== undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.refreshing;
    await Promise.all([...this.runners.values()].map((runner) => runner.stop()));
    this.runners.clear();
  }

  async declare(name: string, body: DeclareSourceDto): Promise<{ created: boolean; source: SourceStatusDto }> {
    const declaration = checkedDeclaration(body);
    const refused = this.hosts.refused(declaration);
    if (refused !== undefined) throw new InvalidInputError(M.hostNotAllowed(refused));
    const { created, stored } = await this.put(name, declaration);
    return { created, source: await this.status(stored) };
  }

  /**
   * Stores a declaration unless the same one is stored: the same declaration again is a no-op (its
   * declaredAt and totals stay), a changed one restarts the source where it stopped (same stream).
   */
  private async put(
    name: string,
    declaration: SourceDeclaration,
  ): Promise<{ created: boolean; changed: boolean; stored: StoredSource }> {
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
    return { created: !existing, changed: !same, stored };
  }

  /**
   * Declares the configured sources as the admin route would. The configuration wins at boot: a
   * declaration an admin changed or deleted since is put back (and logged); until the next boot the
   * admin's change holds. A refusal (another kind under the name, too many sources) is logged and
   * not retried; Redis away leaves the rest for the next refresh.
   */
  private async declareConfigured(): Promise<void> {
    // A set, not a queue: a slow Redis may let two refreshes run this at once, and putting twice is harmless.
    for (const source of this.toDeclare) {
      const { name, declaration } = source;
      try {
        const { created, changed } = await this.put(name, declaration);
        if (created) this.logger.log(`source "${name}" declared from the configuration`);
        else if (changed)
          this.logger.warn(
            `source "${name}": the declaration stored differed from the configuration's; the configuration's now holds`,
          );
      } catch (error) {
        if (!(error instanceof ConflictError)) return;
        this.logger.error(`source "${name}" of the configuration not declared: ${error.message}`);
      }
      this.toDeclare.delete(source);
    }
  }

  async list(): Promise<SourceStatusDto[]> {
    return Promise.all((await this.store.list()).map((stored) => this.status(stored)));
  }

  /**
   * Deletes a declaration and stops its runner here before answering: a refresh already under way
   * may have read the declarations before the delete, so it is told not to start the source again
   * (deletedAt), and the runner stops now rather than at the next refresh (nothing read after the
   * delete is applied: see SourceRunner.stop). Other instances stop theirs at their next refresh.
   */
  async delete(name: string): Promise<void> {
    if (!(await this.store.delete(name))) throw new NotFoundError('INGEST_SOURCE_NOT_FOUND', M.sourceNotFound(name));
    this.deletedAt.set(name, this.refreshesStarted);
    const runner = this.runners.get(name);
    if (runner) {
      this.runners.delete(name);
      await runner.stop();
      this.metrics.forget(name);
    }
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
      throughput: totals.throughput,
      lastError: totals.lastError,
      lastErrorAt: totals.lastErrorAt,
      consumer: totals.leader,
    };
  }

  /** Starts runners of new or changed declarations, stops those of deleted or changed ones. */
  refresh(): Promise<void> {
    if (!this.settings.enabled) return Promise.resolve();
    if (this.refreshing) {
      // The running one may have read the declarations before this change: one more after it.
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = this.reconcile()
      .catch((error: unknown) => {
        // While Redis is away the outage is logged once (RedisService), no line per refresh; a call can
        // fail as unreachable just before that service marks Redis down.
        if (this.redis.down || error instanceof RedisUnavailableError)
          this.logger.debug(`declarations not read (Redis is down): ${String(error)}`);
        else this.logger.warn(`declarations not read: ${String(error)}`);
      })
      .finally(() => {
        this.refreshing = undefined;
        if (!this.refreshAgain) return;
        this.refreshAgain = false;
        void this.refresh();
      });
    return this.refreshing;
  }

  /** The declarations as now stored, less those deleted here since this refresh started reading them. */
  private async declared(): Promise<Map<string, StoredSource>> {
    const started = ++this.refreshesStarted;
    const declared = new Map((await this.store.list()).map((stored) => [stored.name, stored]));
    for (const [name, deletedAt] of this.deletedAt) {
      if (deletedAt >= started) declared.delete(name);
      // Read after the delete: the list says whether the source is declared again since.
      else this.deletedAt.delete(name);
    }
    return declared;
  }

  private async reconcile(): Promise<void> {
    const declared = await this.declared();
    for (const [name, runner] of this.runners) {
      const now = declared.get(name);
      if (now && JSON.stringify(now) === JSON.stringify(runner.stored)) continue;
      this.runners.delete(name);
      await runner.stop();
      this.metrics.forget(name);
    }
    for (const [name, stored] of declared) {
      if (this.runners.has(name) || !this.allowed(stored)) continue;
      const runner = new SourceRunner(stored, this.sourceOf(stored), progressName(name, stored.declaration), {
        store: this.store,
        boards: this.boards,
        instance: this.instance,
        nowMs: () => this.clock.nowMs(),
        budgetFields: this.ranking.expireChunk,
        batch: this.settings.INGEST_BATCH,
        waitMs: this.settings.INGEST_WAIT_MS,
        leaseMs: this.settings.INGEST_LEASE_MS,
        retryMs: this.settings.INGEST_RETRY_MS,
        aliases: this.aliases,
        admit: () => this.admit(),
        observe: (source, figures) => this.metrics.observe(source, figures),
      });
      this.runners.set(name, runner);
      runner.start();
    }
  }

  /** Whether the source's hosts are allowed here (a declaration stored before INGEST_ALLOWED_HOSTS changed may not be). */
  private allowed(stored: StoredSource): boolean {
    const refused = this.hosts.refused(stored.declaration);
    if (refused === undefined) return true;
    if (!this.refusedLogged.has(stored.name))
      this.logger.error(`source "${stored.name}" not started: ${M.hostNotAllowed(refused)}`);
    this.refusedLogged.add(stored.name);
    return false;
  }

  private sourceOf(stored: StoredSource) {
    const declaration = stored.declaration;
    if (declaration.kind === 'nats') return new NatsSource(stored.name, declaration);
    return new RedisStreamSource(stored.name, declaration, this.instance, (url) => this.connect(url));
  }

  /**
   * A connection of the source's own (blocking reads), without the service's command timeout. Its
   * connection errors are not logged here: the runner meets each one as a failed command and records it
   * (`lastError`), where ioredis would print every reconnection attempt while Redis is away.
   */
  private connect(url: string | undefined): Redis | Cluster {
    const client = this.newConnection(url);
    client.on('error', () => undefined);
    return client;
  }

  private newConnection(url: string | undefined): Redis | Cluster {
    const options = { maxRetriesPerRequest: 1, connectTimeout: 2000 };
    if (url !== undefined) return new Redis(url, options);
    const nodes = this.redisSettings.clusterNodes;
    if (!nodes) return new Redis(this.redisSettings.url, options);
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
