import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../../common/clock';
import { InvalidInputError, NotFoundError } from '../../common/errors';
import { BoardCache } from '../boards/board-cache';
import { PreparedBoard } from '../core/board';
import { RetractionMetrics } from './retraction.metrics';
import { RetractionRecord, RetractionStore } from './retraction.store';

/**
 * Most contributions one step takes out (over every window of a shard): each costs about ten Redis
 * commands (a decay view a few more), so a step stays near 2-3 ms (bench/actors.ts), under the 5 ms a call may hold Redis.
 */
export const RETRACT_STEP_CONTRIBUTIONS = 128;

/** What a retraction answers: `events` counts each retracted event once, `amount` sums them. */
export interface RetractionView {
  id: string;
  actor: string;
  state: 'running' | 'done';
  events: number;
  amount: number;
  startedAt: number;
}

/**
 * Retractions of an actor: bounded steps on each shard (retract_step.lua), run in the background
 * after the first step of every shard (which stores the record and the block) has answered. Every step
 * is safe to repeat, so a restart, a second instance or a failed step only means running the rest again:
 * a GET of a retraction still running that no local runner holds starts one.
 */
@Injectable()
export class RetractionService implements OnApplicationShutdown {
  private readonly logger = new Logger('Retraction');
  private readonly runners = new Map<string, Promise<void>>();
  private stopping = false;

  constructor(
    private readonly store: RetractionStore,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
    private readonly metrics: RetractionMetrics,
  ) {}

  async start(name: string, request: { actor: string; blockSec?: number }): Promise<RetractionView> {
    const board = await this.cache.get(name);
    if (!board.config.actors)
      throw new InvalidInputError(`actor: board "${name}" keeps no actors, so it has no actor's events to retract`);
    const id = randomUUID();
    const nowMs = this.clock.nowMs();
    const blockUntilMs = request.blockSec === undefined ? 0 : nowMs + request.blockSec * 1000;
    await this.cache.withBoard(name, (fresh) =>
      Promise.all(fresh.shards.map((_, shard) => this.step(fresh, shard, id, request.actor, blockUntilMs))),
    );
    this.logger.log(`retraction ${id} of an actor on board "${name}" started`);
    this.launch(name, id, request.actor);
    return this.get(name, id);
  }

  async get(name: string, id: string): Promise<RetractionView> {
    const board = await this.cache.get(name);
    const records = await this.store.records(board, id);
    const first = records[0];
    if (first?.actor === undefined)
      throw new NotFoundError('RETRACTION_NOT_FOUND', `retraction "${id}" of board "${name}" is not known`);
    const view = viewOf(id, first.actor, records);
    if (view.state === 'running' && !this.runners.has(runnerKey(name, id))) this.launch(name, id, first.actor);
    return view;
  }

  /** Resolves once this instance's runner of the retraction (if any) has stopped: finished or paused. */
  async settled(name: string, id: string): Promise<void> {
    await this.runners.get(runnerKey(name, id));
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.runners.values()]);
  }

  private launch(name: string, id: string, actor: string): void {
    const key = runnerKey(name, id);
    if (this.stopping || this.runners.has(key)) return;
    const runner = this.run(name, id, actor)
      .catch((error: unknown) =>
        this.logger.warn(`retraction ${id} on board "${name}" paused (a GET resumes it): ${String(error)}`),
      )
      .finally(() => {
        this.runners.delete(key);
        this.metrics.runningNow(this.runners.size);
      });
    this.runners.set(key, runner);
    this.metrics.runningNow(this.runners.size);
  }

  /** Steps every shard until each answers done (a board that lost shards meanwhile: the ones left). */
  private async run(name: string, id: string, actor: string): Promise<void> {
    for (let shard = 0; ; shard++) {
      let done = false;
      while (!done) {
        if (this.stopping) return;
        const step = await this.cache.withBoard(name, async (board) =>
          shard < board.shards.length ? this.step(board, shard, id, actor, 0) : undefined,
        );
        if (step === undefined) {
          const view = await this.get(name, id);
          this.metrics.finishedOne();
          this.logger.log(`retraction ${id} on board "${name}" done: ${view.events} events, amount ${view.amount}`);
          return;
        }
        done = step.done;
      }
    }
  }

  private async step(board: PreparedBoard, shard: number, id: string, actor: string, blockUntilMs: number) {
    const reply = await this.store.step(board, board.shards[shard], {
      id,
      actor,
      most: RETRACT_STEP_CONTRIBUTIONS,
      ledgerWindow: ledgerWindowOf(board),
      blockUntilMs,
      nowMs: this.clock.nowMs(),
    });
    this.metrics.took(reply.taken);
    return reply;
  }
}

function runnerKey(name: string, id: string): string {
  return `${name}\u001f${id}`;
}

/** The window whose contributions count a retraction's events: the longest, which holds every live event. */
function ledgerWindowOf(board: PreparedBoard): number {
  const windows = board.config.windows;
  return windows.reduce((longest, w, i) => (w.periodSec > windows[longest].periodSec ? i : longest), 0);
}

/** The shards' records as one retraction: done once every shard's is. */
function viewOf(id: string, actor: string, records: RetractionRecord[]): RetractionView {
  const sum = (field: 'events' | 'amount') => records.reduce((total, r) => total + Number(r[field] ?? 0), 0);
  return {
    id,
    actor,
    state: records.every((r) => r.state === 'done') ? 'done' : 'running',
    events: sum('events'),
    amount: sum('amount'),
    startedAt: Math.floor(Number(records[0].startedMs) / 1000),
  };
}
