import { Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { Clock } from '../../common/clock';
import { InvalidInputError, NotFoundError } from '../../common/errors';
import { blockKeyOf } from '../../common/names';
import type { WriteAnswer } from '../../common/retry-safe';
import { IdempotencyKeyReusedError } from '../../redis/idempotency';
import { BoardCache } from '../boards/board-cache';
import { PreparedBoard } from '../core/board';
import { ResumableRuns, runnerKey } from '../core/left-running';
import { ledgerWindowOf } from '../core/ledger-window';
import { HistoryStore } from '../history/history.store';
import { ArchivesStore } from '../calendar/archives.store';
import { RetractionMetrics } from './retraction.metrics';
import { RetractionKind, RetractionRecord, RetractionStore } from './retraction.store';
import { keptScore } from '../options/registry';

/** What a retraction takes out: an actor's events, or an item. */
export type RetractionTarget = { kind: RetractionKind; id: string };

/** What a retraction answers: `events` counts each retracted event once, `amount` sums them. */
export interface RetractionView {
  id: string;
  actor?: string;
  item?: string;
  state: 'running' | 'done';
  events: number;
  amount: number;
  startedAt: number;
}

/** One retraction as its runner goes: the board, its id, what it takes out. */
interface Run {
  board: string;
  id: string;
  target: RetractionTarget;
}

/**
 * Retractions of an actor or an item: bounded steps on each shard concerned (retract_step.lua,
 * retract_item.lua), run in the background after the first step of every such shard (which stores the
 * record and the block) has answered. Every step is safe to repeat, so a restart, a second instance or
 * a failed step only means running the rest again: a GET of a retraction still running that no local
 * runner holds starts one.
 */
@Injectable()
export class RetractionService extends ResumableRuns {
  constructor(
    private readonly store: RetractionStore,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
    private readonly metrics: RetractionMetrics,
    private readonly history: HistoryStore,
    private readonly archives: ArchivesStore,
  ) {
    super(
      store,
      'Retraction',
      {
        plural: 'retractions',
        one: (board, id) => `retraction ${id} on board "${board}"`,
        gone: (error) => error instanceof NotFoundError,
      },
      (running) => metrics.runningNow(running),
    );
  }

  /**
   * Starts a retraction. With an Idempotency-Key (scoped to the client) its id is derived from the key,
   * so a repeat finds the retraction it started (a replay) instead of starting another; the same key
   * for another actor or item is a 422.
   */
  async start(
    name: string,
    target: RetractionTarget,
    blockSec?: number,
    idemKey?: string,
  ): Promise<WriteAnswer<RetractionView>> {
    const board = await this.cache.get(name);
    const id = idemKey === undefined ? randomUUID() : keyedId(name, idemKey);
    const earlier = idemKey === undefined ? undefined : await this.find(board, id);
    if (earlier) {
      if (earlier[target.kind] !== target.id) throw new IdempotencyKeyReusedError();
      return { replayed: true, body: earlier };
    }
    if (target.kind === 'actor' && !board.config.actors)
      throw new InvalidInputError(`actor: board "${name}" keeps no actors, so it has no actor's events to retract`);
    // A max / min / last window keeps no sum to subtract an item's share from (its slots hold best scores).
    const kept = keptScore(board.config);
    if (target.kind === 'item' && kept !== undefined)
      throw new InvalidInputError(`item: board "${name}" aggregates by ${kept}: retractions need a sum board`);
    const run = { board: name, id, target };
    const nowMs = this.clock.nowMs();
    if (target.kind === 'item') await this.cutHistory(name, target.id, nowMs);
    const blockUntilMs = blockSec === undefined ? 0 : nowMs + blockSec * 1000;
    await this.cache.withBoard(name, (fresh) =>
      Promise.all(shardsOf(fresh, target).map((shard) => this.step(fresh, shard, run, blockUntilMs))),
    );
    await this.store.running(name, run.id, nowMs);
    this.logger.log(`retraction ${run.id} of an ${target.kind} on board "${name}" started`);
    this.launch(run);
    return { replayed: false, body: await this.get(name, run.id) };
  }

  async get(name: string, id: string): Promise<RetractionView> {
    const view = await this.find(await this.cache.get(name), id);
    if (!view) throw new NotFoundError('RETRACTION_NOT_FOUND', `retraction "${id}" of board "${name}" is not known`);
    return view;
  }

  /** The retraction as its records say (undefined: none); one still running that no local runner holds is resumed. */
  private async find(board: PreparedBoard, id: string): Promise<RetractionView | undefined> {
    const records = (await this.store.records(board, id)).filter((r) => r.state !== undefined);
    const target = targetOf(records[0]);
    if (!target) return undefined;
    const view = viewOf(id, target, records);
    const name = board.config.name;
    if (view.state === 'running' && !this.runs.has(runnerKey(name, id))) this.launch({ board: name, id, target });
    return view;
  }

  private launch(run: Run): void {
    this.left.launch(run.board, run.id, () => this.run(run));
  }

  /** Steps every shard concerned until each answers done (a board that lost shards meanwhile: the ones left). */
  private async run(run: Run): Promise<void> {
    let grouped = false;
    for (let turn = 0; ; turn++) {
      let done = false;
      while (!done) {
        if (this.runs.stopping) return;
        const step = await this.cache.withBoard(run.board, async (board) => {
          const shard = shardsOf(board, run.target)[turn];
          return shard === undefined ? undefined : this.step(board, shard, run, 0);
        });
        if (step === undefined) {
          if (run.target.kind === 'item') await this.groupListingsOut(run, grouped);
          await this.store.finished(run.board, run.id);
          const view = await this.get(run.board, run.id);
          this.metrics.finishedOne();
          this.logger.log(
            `retraction ${run.id} on board "${run.board}" done: ${view.events} events, amount ${view.amount}`,
          );
          return;
        }
        done = step.done;
        grouped = step.grouped;
      }
    }
  }

  /**
   * An item retracted from a sharded board: out of the listings its group boards keep on shard 0 (the
   * item's shard's steps took it out of its parts of the others), then the previous ranks forgotten.
   * Not `grouped` (its shard names no group board: the item is in no group), no listing counts it.
   */
  private async groupListingsOut(run: Run, grouped: boolean): Promise<void> {
    for (let done = !grouped; !done && !this.runs.stopping;) {
      done = await this.cache.withBoard(run.board, async (board) => {
        if (!board.sharded) return true;
        const step = await this.store.groupListingsStep(board, {
          id: run.id,
          item: run.target.id,
          nowMs: this.clock.nowMs(),
        });
        this.metrics.took(step.taken);
        return step.done;
      });
    }
    this.history.forgetPreviousRanks(run.board);
  }

  /**
   * A sharded board's kept snapshots and archives (each metric's) cut to the board's rows where the item
   * is listed, before its first step takes the item's rows out of them (HistoryStore / ArchivesStore
   * cutToBoard): 1 shard and N then answer alike.
   */
  private async cutHistory(name: string, item: string, nowMs: number): Promise<void> {
    await this.cache.withBoard(name, async (board) => {
      for (const metric of board.config.metrics ?? [undefined])
        for (const window of board.config.windows) {
          await this.history.cutToBoard(board.metric(metric), window, item, nowMs);
          await this.archives.cutToBoard(board.metric(metric), window, item, nowMs);
        }
    });
  }

  private async step(board: PreparedBoard, shard: number, run: Run, blockUntilMs: number) {
    const reply = await this.store.step(run.target.kind, board, board.shards[shard], {
      id: run.id,
      target: run.target.id,
      most: this.store.stepUnits,
      ledgerWindow: ledgerWindowOf(board),
      blockUntilMs,
      blockKey: run.target.kind === 'actor' ? blockKeyOf(run.target.id) : run.target.id,
      nowMs: this.clock.nowMs(),
    });
    this.metrics.took(reply.taken);
    return reply;
  }
}

/** A retraction id from a client's Idempotency-Key: a UUID (version 4 layout) of the key's digest. */
function keyedId(name: string, idemKey: string): string {
  const hex = createHash('sha256').update(`retraction\u001f${name}\u001f${idemKey}`).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The shards a retraction runs on: every shard for an actor, the item's own for an item. */
function shardsOf(board: PreparedBoard, target: RetractionTarget): number[] {
  if (target.kind === 'item') return [board.shards.indexOf(board.shardOf(target.id))];
  return board.shards.map((_, shard) => shard);
}

function targetOf(record: RetractionRecord | undefined): RetractionTarget | undefined {
  if (record?.actor !== undefined) return { kind: 'actor', id: record.actor };
  if (record?.item !== undefined) return { kind: 'item', id: record.item };
  return undefined;
}

/** The shards' records as one retraction: done once every shard's is. */
function viewOf(id: string, target: RetractionTarget, records: RetractionRecord[]): RetractionView {
  const sum = (field: 'events' | 'amount') => records.reduce((total, r) => total + Number(r[field] ?? 0), 0);
  return {
    id,
    [target.kind]: target.id,
    state: records.every((r) => r.state === 'done') ? 'done' : 'running',
    events: sum('events'),
    amount: sum('amount'),
    startedAt: Math.floor(Number(records[0].startedMs) / 1000),
  };
}
