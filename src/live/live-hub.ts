import { Injectable, Logger, OnApplicationShutdown, OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../common/config';
import { Clock } from '../common/clock';
import { DomainError, NotFoundError } from '../common/errors';
import { RankedRow } from '../ranking/ranking.store';
import { RankingService } from '../ranking/ranking.service';
import { slotStartSec } from '../ranking/window-math';
import { MAX_STREAM_CLIENTS, STREAM_HEARTBEAT_MS } from './live.limits';

/** What a stream event carries: the watched rows of one window and the board's change version. */
export interface LiveListing {
  board: string;
  window: string;
  from: number;
  to: number;
  version: number;
  items: RankedRow[];
}

/** One connected stream client: the transport (SSE over a socket in production) behind three calls. */
export interface LiveClient {
  send(event: 'snapshot' | 'top', id: number, listing: LiveListing): void;
  heartbeat(): void;
  close(): void;
}

/** The clients of one board watching the same window and row count: one read serves them all. */
interface WatchGroup {
  window: string;
  limit: number;
  intervalSec: number;
  clients: Set<LiveClient>;
  /** The rows last sent (JSON), and the slot they were read in: a new slot may change them without a write. */
  sentRows: string;
  sentSlotSec: number;
}

interface WatchedBoard {
  version: number;
  groups: Map<string, WatchGroup>;
}

/**
 * Live top-N streams. Each instance polls, every STREAM_COALESCE_MS, only the boards its own clients
 * watch: one change-version read per board (every write bumps the version in its own script), and one
 * top read per watched window and row count when the version moved or a slot boundary passed. So the
 * Redis work is per watched board per tick, never per client or per write, and a board gets at most
 * one event per tick whatever its write rate. Several instances each poll their own watched boards.
 */
@Injectable()
export class LiveHub implements OnModuleDestroy, OnApplicationShutdown {
  private readonly logger = new Logger('LiveHub');
  private readonly boards = new Map<string, WatchedBoard>();
  private readonly coalesceMs: number;
  private clientCount = 0;
  private pollTimer?: NodeJS.Timeout;
  private heartbeatTimer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  /** Bumped when every client is dropped at once (shutdown), so their own later unsubscribes change nothing. */
  private generation = 0;

  constructor(
    private readonly ranking: RankingService,
    private readonly clock: Clock,
    config: AppConfig,
  ) {
    this.coalesceMs = config.STREAM_COALESCE_MS;
  }

  /**
   * Reads the window's rows (404 for an unknown board or window: nothing is subscribed then) and
   * answers them as the client's first event, then adds the client to its board's watch.
   */
  async subscribe(
    board: string,
    window: string | undefined,
    limit: number,
    client: () => LiveClient,
  ): Promise<() => void> {
    if (this.clientCount >= MAX_STREAM_CLIENTS)
      throw new DomainError('STREAM_CAPACITY', `this instance serves its most live streams (${MAX_STREAM_CLIENTS})`);
    const [version, top] = await Promise.all([
      this.ranking.changeVersion(board),
      this.ranking.top(board, window, 0, limit),
    ]);
    const info = await this.ranking.getBoard(board);
    const intervalSec = info.windows.find((w) => w.name === top.window)?.interval ?? 1;
    const listing = this.listingOf(top, version);
    const connected = client();
    connected.send('snapshot', version, listing);
    const watched = this.boards.get(board) ?? { version, groups: new Map<string, WatchGroup>() };
    this.boards.set(board, watched);
    const key = `${top.window}\x1f${limit}`;
    const group = watched.groups.get(key) ?? {
      window: top.window,
      limit,
      intervalSec,
      clients: new Set<LiveClient>(),
      sentRows: JSON.stringify(listing.items),
      sentSlotSec: this.slotOf(intervalSec),
    };
    watched.groups.set(key, group);
    group.clients.add(connected);
    this.clientCount++;
    this.startTimers();
    let subscribed = true;
    const generation = this.generation;
    return () => {
      // A client ended by shutdown was already dropped with everything else.
      if (!subscribed || generation !== this.generation) return;
      subscribed = false;
      this.clientCount--;
      group.clients.delete(connected);
      if (group.clients.size === 0) watched.groups.delete(key);
      if (watched.groups.size === 0 && this.boards.get(board) === watched) this.boards.delete(board);
      if (this.clientCount === 0) this.stopTimers();
    };
  }

  /** Clients connected to this instance. */
  get clients(): number {
    return this.clientCount;
  }

  /**
   * One poll of every watched board (what the timer runs every STREAM_COALESCE_MS; tests call it to
   * drive the stream). Never overlaps itself: a tick during a poll joins it.
   */
  tick(): Promise<void> {
    this.polling ??= this.poll().finally(() => (this.polling = undefined));
    return this.polling;
  }

  /** Sends the heartbeat comment to every client (the timer's job every STREAM_HEARTBEAT_MS). */
  heartbeat(): void {
    for (const watched of this.boards.values())
      for (const group of watched.groups.values()) for (const client of group.clients) client.heartbeat();
  }

  /** Ends every stream before the HTTP server closes, so closing never waits on an open stream. */
  onModuleDestroy(): void {
    this.stopTimers();
    for (const watched of this.boards.values())
      for (const group of watched.groups.values()) for (const client of group.clients) client.close();
    this.boards.clear();
    this.clientCount = 0;
    this.generation++;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.polling;
  }

  private async poll(): Promise<void> {
    await Promise.all(
      [...this.boards].map(([board, watched]) =>
        this.pollBoard(board, watched).catch((error: unknown) => {
          // The board or a watched window is gone: its streams end (a reconnect gets the 404 or a fresh snapshot).
          if (error instanceof NotFoundError) return this.endBoard(watched);
          this.logger.warn(
            `polling board "${board}" failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        }),
      ),
    );
  }

  /** Ends every stream of a board: each client's close then unsubscribes it. */
  private endBoard(watched: WatchedBoard): void {
    for (const group of watched.groups.values()) for (const client of group.clients) client.close();
  }

  private async pollBoard(board: string, watched: WatchedBoard): Promise<void> {
    const version = await this.ranking.changeVersion(board);
    const moved = version !== watched.version;
    watched.version = version;
    await Promise.all(
      [...watched.groups.values()].map(async (group) => {
        const slotSec = this.slotOf(group.intervalSec);
        if (!moved && slotSec === group.sentSlotSec) return;
        const top = await this.ranking.top(board, group.window, 0, group.limit);
        const listing = this.listingOf(top, version);
        const rows = JSON.stringify(listing.items);
        group.sentSlotSec = slotSec;
        if (rows === group.sentRows) return;
        group.sentRows = rows;
        for (const client of group.clients) client.send('top', version, listing);
      }),
    );
  }

  private listingOf(
    top: { board: string; window: string; from: number; to: number; items: RankedRow[] },
    version: number,
  ): LiveListing {
    return { board: top.board, window: top.window, from: top.from, to: top.to, version, items: top.items };
  }

  private slotOf(intervalSec: number): number {
    return slotStartSec(Math.floor(this.clock.nowMs() / 1000), intervalSec);
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
