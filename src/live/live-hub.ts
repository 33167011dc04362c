import type { LiveClient } from './live-client';
import { Injectable, Logger, OnApplicationShutdown, OnModuleDestroy } from '@nestjs/common';
import { ApiKeysService } from '../access/api-keys.service';
import { Clock } from '../common/clock';
import { DomainError, NotFoundError } from '../common/errors';
import { RateLimitGuard } from '../governance/rate-limit.guard';
import { RankingService } from '../ranking/ranking.service';
import { RedisService } from '../redis/redis.service';
import { IncidentLog } from './incident-log';
import {
  STREAM_HEARTBEAT_MS,
  STREAM_MAX_BUFFERED_BYTES,
  STREAM_POLL_COMMANDS_PER_TICK,
  STREAM_POLL_CONCURRENCY,
  STREAM_POLL_SHED_SHARE,
  STREAM_READ_COST_PER_SHARD,
} from './live.limits';
import { LIVE_MESSAGES as M } from './live.messages';
import { HEARTBEAT_FRAME, sseFrame } from './sse';
import { StreamFilters, Subscriber, subscribersOf, Watch, WatchedBoard, WatchGroup, WatchSet } from './watch-set';
import { LiveSettings } from './live.settings';
import { StreamEnd, StreamMetrics } from './stream-metrics';
import { headOf, LiveListing, readListing } from './live-listing';

export type { LiveListing } from './live-listing';

interface Held {
  count: number;
  subscribers: Set<Subscriber>;
}

/**
 * Live top-N streams. Each instance polls, every STREAM_COALESCE_MS, only the boards its own clients
 * watch: one change-version read per board (every write bumps the version in its own script), and one
 * top read per watched window and row bucket when the version moved or a slot boundary passed. A tick
 * plans at most STREAM_POLL_COMMANDS_PER_TICK commands (the other boards wait their turn) and is
 * skipped while Redis is behind with this instance's commands, so requests come first. Each event is
 * serialised once per row count and written to every client of it; a client that does not read is
 * dropped (buffer bound, idle timeout), every stream ends after STREAM_MAX_LIFETIME_MS or when its
 * key is revoked, and each client holds at most STREAM_MAX_PER_CLIENT streams.
 */
@Injectable()
export class LiveHub implements OnModuleDestroy, OnApplicationShutdown {
  private readonly incidents: IncidentLog;
  private readonly watches = new WatchSet();
  private readonly subscribers = new Set<Subscriber>();
  /** Streams held (or being opened) per client. */
  private readonly owners = new Map<string, Held>();
  private held = 0;
  private readonly coalesceMs: number;
  private readonly maxStreams: number;
  private readonly maxPerClient: number;
  private readonly maxSegmentsPerBoard: number;
  private readonly lifetimeMs: number;
  private readonly idleMs: number;
  private readonly shedAtPending: number;
  private pollTimer?: NodeJS.Timeout;
  private heartbeatTimer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  /** What to call when each stream ends: its log line and /metrics. */
  private readonly ends = new WeakMap<Subscriber, (reason: StreamEnd, endedAtMs: number) => void>();
  /** Bumped when every client is dropped at once (shutdown), so their own later releases change nothing. */
  private generation = 0;

  constructor(
    private readonly ranking: RankingService,
    private readonly clock: Clock,
    private readonly redis: RedisService,
    private readonly readBudget: RateLimitGuard,
    keys: ApiKeysService,
    config: LiveSettings,
    private readonly streams: StreamMetrics,
  ) {
    this.incidents = new IncidentLog(new Logger('LiveHub'), clock);
    this.coalesceMs = config.STREAM_COALESCE_MS;
    // Streams never take more than half the connections: probes and ordinary requests always get one.
    this.maxStreams = Math.max(1, Math.min(config.STREAM_MAX_STREAMS, Math.floor(config.HTTP_MAX_CONNECTIONS / 2)));
    this.maxPerClient = config.STREAM_MAX_PER_CLIENT;
    this.maxSegmentsPerBoard = config.STREAM_MAX_SEGMENTS_PER_BOARD;
    this.lifetimeMs = config.STREAM_MAX_LIFETIME_MS;
    this.idleMs = config.STREAM_IDLE_TIMEOUT_MS;
    this.shedAtPending = Math.max(1, Math.floor(config.REDIS_MAX_PENDING_COMMANDS * STREAM_POLL_SHED_SHARE));
    // A request with a key names the client `key:<name>` (callerOf): those streams end with the key.
    keys.onKeysDropped((names) => {
      for (const name of names)
        for (const subscriber of [...(this.owners.get(`key:${name}`)?.subscribers ?? [])])
          this.drop(subscriber, 'revoked');
    });
  }

  /**
   * Reads the window's rows (404 for an unknown board or window: nothing is subscribed then) and
   * answers them as the client's first event, then adds the client to its board's watch. Refused
   * beyond the instance's streams (503 STREAM_CAPACITY), the client's (429 STREAM_LIMIT), the board's
   * distinct segments (429 STREAM_SEGMENT_LIMIT) and its read
   * budget (429 RATE_LIMITED: a stream costs STREAM_READ_COST_PER_SHARD reads per shard). Answers what
   * takes the client out when its connection closes. With `segment`, the rows are that segment's;
   * with `filters`, GET top's filtered page (perGroup, minActors: rows keep their board rank).
   */
  async subscribe(
    board: string,
    window: string | undefined,
    limit: number,
    owner: string,
    open: () => LiveClient,
    segment?: string,
    filters: StreamFilters = {},
  ): Promise<() => void> {
    refuseNewSegment(this.watches, { board, segment }, this.maxSegmentsPerBoard);
    const release = this.reserve(owner);
    try {
      const info = await this.ranking.getBoard(board);
      // The route's guard already counted one read.
      this.readBudget.chargeReads(owner, STREAM_READ_COST_PER_SHARD * info.shards - 1);
      const charge = (calls: number) => this.readBudget.chargeReads(owner, calls);
      const stream = { board, window, segment, filters };
      const [version, top] = await Promise.all([
        this.ranking.changeVersion(board),
        readListing(this.ranking, stream, limit, charge),
      ]);
      const listing: LiveListing = { ...headOf(top, version, stream), items: top.items };
      // Again after the reads: other streams may have taken the last segments meanwhile.
      refuseNewSegment(this.watches, { board, segment }, this.maxSegmentsPerBoard);
      const client = open();
      client.write(sseFrame('snapshot', version, JSON.stringify(listing)));
      const shape = { board, shards: info.shards, metrics: info.metrics?.length ?? 0, window: top.window, segment };
      const watch = { ...shape, version, limit, untilSec: top.to ?? Infinity, filters };
      const subscriber = this.watch({ ...watch, rows: JSON.stringify(listing.items) }, { client, owner, release });
      return () => this.detach(subscriber, 'client');
    } catch (error) {
      release();
      throw error;
    }
  }

  /** Adds a client that got its snapshot to its board's watch and to its owner's streams. */
  private watch(watched: Watch, who: { client: LiveClient; owner: string; release: () => void }): Subscriber {
    const nowMs = this.clock.nowMs();
    const { client, owner, release } = who;
    const subscriber: Subscriber = { client, owner, openedAtMs: nowMs, lastProgressMs: nowMs, detach: () => {} };
    const remove = this.watches.add(watched, subscriber);
    const held = this.owners.get(owner);
    held?.subscribers.add(subscriber);
    subscriber.detach = () => {
      remove();
      held?.subscribers.delete(subscriber);
      release();
    };
    this.subscribers.add(subscriber);
    const { board, window, segment } = watched;
    this.ends.set(subscriber, this.streams.streamOpened({ board, window, segment, owner }, nowMs));
    this.startTimers();
    return subscriber;
  }

  /** HEAD: the same 404s (and 400s of its filters) as a stream, nothing subscribed. */
  check(board: string, window: string | undefined, segment?: string, filters: StreamFilters = {}): Promise<unknown> {
    return readListing(this.ranking, { board, window, segment, filters }, 1, () => {});
  }

  /** Clients connected to this instance. */
  get clients(): number {
    return this.subscribers.size;
  }

  /** Boards this instance polls. */
  get boards(): number {
    return this.watches.boardCount;
  }

  /**
   * One poll of the watched boards next in turn (what the timer runs every STREAM_COALESCE_MS; tests
   * call it to drive the stream). Never overlaps itself: a tick during a poll joins it.
   */
  tick(): Promise<void> {
    this.polling ??= this.poll().finally(() => (this.polling = undefined));
    return this.polling;
  }

  /**
   * The timer's job every STREAM_HEARTBEAT_MS: ends the streams past their lifetime and those whose
   * client read nothing for STREAM_IDLE_TIMEOUT_MS, and sends the others the heartbeat comment.
   */
  heartbeat(): void {
    const nowMs = this.clock.nowMs();
    let idle = 0;
    for (const subscriber of [...this.subscribers]) {
      if (nowMs - subscriber.openedAtMs >= this.lifetimeMs) {
        this.drop(subscriber, 'lifetime');
        continue;
      }
      if (subscriber.client.takeProgress()) subscriber.lastProgressMs = nowMs;
      else if (nowMs - subscriber.lastProgressMs >= this.idleMs) {
        idle++;
        this.drop(subscriber, 'idle');
        continue;
      }
      this.deliver(subscriber, HEARTBEAT_FRAME);
    }
    if (idle > 0) this.incidents.note('idle', M.clientsDropped(idle, `read nothing for ${this.idleMs} ms`));
  }

  /** Ends every stream before the HTTP server closes, so closing never waits on an open stream. */
  onModuleDestroy(): void {
    this.stopTimers();
    const nowMs = this.clock.nowMs();
    for (const subscriber of this.subscribers) {
      this.ends.get(subscriber)?.('shutdown', nowMs);
      subscriber.client.close();
    }
    this.subscribers.clear();
    this.watches.clear();
    this.owners.clear();
    this.held = 0;
    this.generation++;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.polling;
  }

  /** Counts a stream being opened against the instance's and the client's caps; answers its release. */
  private reserve(owner: string): () => void {
    if (this.held >= this.maxStreams) throw new DomainError('STREAM_CAPACITY', M.instanceFull(this.maxStreams));
    const held = this.owners.get(owner) ?? { count: 0, subscribers: new Set<Subscriber>() };
    if (held.count >= this.maxPerClient) throw new DomainError('STREAM_LIMIT', M.clientFull(this.maxPerClient));
    held.count++;
    this.held++;
    this.owners.set(owner, held);
    const generation = this.generation;
    let released = false;
    return () => {
      if (released || generation !== this.generation) return;
      released = true;
      held.count--;
      this.held--;
      if (held.count === 0 && this.owners.get(owner) === held) this.owners.delete(owner);
    };
  }

  private detach(subscriber: Subscriber, reason: StreamEnd): void {
    if (!this.subscribers.delete(subscriber)) return;
    this.ends.get(subscriber)?.(reason, this.clock.nowMs());
    subscriber.detach();
    if (this.subscribers.size === 0) this.stopTimers();
  }

  /** Takes a client out and ends its stream: cut (idle, buffer), or ended after what is buffered. */
  private drop(subscriber: Subscriber, reason: StreamEnd): void {
    this.detach(subscriber, reason);
    if (reason === 'idle' || reason === 'buffer') subscriber.client.destroy();
    else subscriber.client.close();
  }

  /** Writes a frame; a client gone is taken out, one whose buffer passes the bound is dropped. */
  private deliver(subscriber: Subscriber, frame: Buffer): void {
    if (!subscriber.client.write(frame)) {
      this.detach(subscriber, 'client');
      return;
    }
    if (subscriber.client.bufferedBytes <= STREAM_MAX_BUFFERED_BYTES) return;
    this.drop(subscriber, 'buffer');
    this.incidents.note('buffer', M.clientsDropped(1, `over ${STREAM_MAX_BUFFERED_BYTES} bytes unread`));
  }

  /** True (and noted) while Redis is too far behind with this instance's commands for the poller to add any. */
  private shedding(): boolean {
    const pending = this.redis.pendingCommands();
    if (pending < this.shedAtPending) return false;
    this.incidents.note('shed', M.pollsShed(pending));
    return true;
  }

  private async poll(): Promise<void> {
    if (this.shedding()) return;
    const due = this.watches.due(STREAM_POLL_COMMANDS_PER_TICK);
    let next = 0;
    let failed = 0;
    let polled = 0;
    let example: [string, string] | undefined;
    const worker = async () => {
      while (next < due.length && !this.shedding()) {
        const { watched, groups } = due[next++];
        this.watches.rotate(watched);
        polled++;
        try {
          await this.pollBoard(watched, groups);
        } catch (error) {
          // The board or a watched window is gone: its streams end (a reconnect gets the 404 or a fresh snapshot).
          if (error instanceof NotFoundError) {
            for (const subscriber of subscribersOf(watched)) this.drop(subscriber, 'board_gone');
            continue;
          }
          failed++;
          example ??= [watched.name, error instanceof Error ? error.message : String(error)];
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(STREAM_POLL_CONCURRENCY, due.length) }, worker));
    if (example) this.incidents.note('poll', M.pollsFailed(failed, polled, ...example));
  }

  /** The board's change version, then the rows of `groups` (those the tick's budget admits). */
  private async pollBoard(watched: WatchedBoard, groups: WatchGroup[]): Promise<void> {
    const version = await this.ranking.changeVersion(watched.name);
    watched.version = version;
    await Promise.all(groups.map((group) => this.pollGroup(watched, group, version)));
  }

  private async pollGroup(watched: WatchedBoard, group: WatchGroup, version: number): Promise<void> {
    // A slot's end (or a calendar period's, in its zone) passed: expiry may have changed the rows, with no write.
    if (version === group.version && Math.floor(this.clock.nowMs() / 1000) < group.readUntilSec) return;
    // The poll's calls were planned in the tick's budget (WatchSet.due): none is charged to a client.
    const top = await readListing(this.ranking, { ...group, board: watched.name }, group.readRows, () => {});
    group.version = version;
    group.readUntilSec = top.to ?? Infinity;
    const head = JSON.stringify(headOf(top, version, group));
    for (const view of group.views.values()) {
      const rows = JSON.stringify(top.items.slice(0, view.limit));
      if (rows === view.sentRows) continue;
      view.sentRows = rows;
      // The listing's JSON with its items spliced in: the same bytes as JSON.stringify(listing), made once.
      const frame = sseFrame('top', version, `${head.slice(0, -1)},"items":${rows}}`);
      for (const subscriber of view.subscribers) this.deliver(subscriber, frame);
    }
  }

  private startTimers(): void {
    if (this.pollTimer) return;
    this.pollTimer = setInterval(() => void this.tick(), this.coalesceMs);
    this.heartbeatTimer = setInterval(() => this.heartbeat(), STREAM_HEARTBEAT_MS);
    this.pollTimer.unref();
    this.heartbeatTimer.unref();
  }

  private stopTimers(): void {
    clearInterval(this.pollTimer);
    clearInterval(this.heartbeatTimer);
    this.pollTimer = undefined;
    this.heartbeatTimer = undefined;
  }
}

/** 429 STREAM_SEGMENT_LIMIT for a new segment of a board whose streams watch their most (STREAM_MAX_SEGMENTS_PER_BOARD). */
function refuseNewSegment(watches: WatchSet, stream: { board: string; segment?: string }, most: number): void {
  if (watches.admitsSegment(stream.board, stream.segment, most)) return;
  throw new DomainError('STREAM_SEGMENT_LIMIT', M.segmentsFull(stream.board, most));
}
