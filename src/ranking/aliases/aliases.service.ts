import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Clock } from '../../common/clock';
import { ConflictError, InvalidInputError, NotFoundError } from '../../common/errors';
import type { WriteAnswer } from '../../common/retry-safe';
import { BoardCache } from '../boards/board-cache';
import { PreparedBoard } from '../core/board';
import { ResumableRuns, runnerKey } from '../core/left-running';
import { ALIASES_PER_BOARD } from '../core/ranking.limits';
import { RANKING_MESSAGES as M } from '../core/ranking.messages';
import { AliasMap } from './alias-map';
import { AliasesStore } from './aliases.store';
import { keptScore } from '../options/registry';

/**
 * Most units of work one take does: a window looked into or a slot looked at (1), an amount or a
 * contribution moved (1 + the views reading its window), as a retraction's step weighs them; its give
 * does at most as much again on the canonical item's shard. A take giving its chunk in the same call
 * (both ids on one shard) does half as many, so that call's work stays that of one step. About 6 Redis
 * commands a unit: 32 made 10 000 events 2 477 round trips (bench/aliases.ts), most of a merge's time;
 * 128 made them 266 but a call on the worst-case board 1 660 commands; 64 keeps that near 800. What a
 * take or a give drains first spends about as many commands at most (alias_step's UNIT_COMMANDS).
 */
export const ALIAS_STEP_UNITS = 64;

/** What PUT and GET /admin/boards/:board/aliases/:alias answer. */
export interface AliasView {
  /** The merge's id. */
  id: string;
  alias: string;
  /** The canonical item. */
  item: string;
  state: 'running' | 'done';
  /** Slot amounts and actor contributions of the alias moved so far (each window's and segment's). */
  entries: number;
}

/**
 * Aliases: a PUT names the alias on shard 0 (every instance's writes resolve it within a second, and
 * the alias's shard refuses its events from the first take on), then merges the alias's live counts
 * into the canonical item's in bounded take / give steps run in the background; every step is safe to
 * repeat, so a restart or a second instance only runs the rest again (a GET of one still running that
 * no local runner holds resumes it).
 */
@Injectable()
export class AliasesService extends ResumableRuns {
  constructor(
    private readonly store: AliasesStore,
    private readonly aliases: AliasMap,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
  ) {
    super(store, 'Aliases', {
      plural: 'alias merges',
      one: (board) => `alias merge on board "${board}"`,
      gone: (error) => error instanceof NotFoundError,
    });
  }

  /** Names `alias` a spelling of `item`; a repeat (a retry too) answers the merge's progress. */
  async put(name: string, alias: string, item: string): Promise<WriteAnswer<AliasView>> {
    if (alias === item) throw new InvalidInputError(M.aliasOfItself(alias));
    checkBoard(await this.cache.get(name));
    const reply = await this.cache.withBoard(name, async (board) => {
      const put = { alias, item, run: randomUUID(), most: ALIASES_PER_BOARD, nowMs: this.clock.nowMs() };
      const stored = await this.store.put(board, put);
      if (stored.status === 'created') await this.take(board, alias, stored.item, stored.run, 0);
      await this.aliases.reload(board);
      return stored;
    });
    if (reply.status === 'full') throw new ConflictError('ALIASES_FULL', M.aliasesFull(name, ALIASES_PER_BOARD));
    if (reply.status === 'conflict') throw new ConflictError('ALIAS_CONFLICT', M.aliasConflict(name, alias, item));
    await this.store.running(name, alias, this.clock.nowMs());
    this.launch(name, alias);
    return { replayed: false, body: await this.get(name, alias) };
  }

  /** The merge's progress; one still running that no local runner holds is resumed. */
  async get(name: string, alias: string): Promise<AliasView> {
    const board = await this.cache.get(name);
    const named = await this.store.lookup(board, alias);
    if (!named) throw new NotFoundError('ITEM_NOT_FOUND', M.aliasNotFound(name, alias));
    const record = await this.store.record(board, alias);
    const done = record.run === named.run && record.state === 'done';
    if (!done && !this.runs.has(runnerKey(name, alias))) this.launch(name, alias);
    const entries = record.run === named.run ? Number(record.entries ?? 0) : 0;
    return { id: named.run, alias, item: named.item, state: done ? 'done' : 'running', entries };
  }

  private launch(name: string, alias: string): void {
    this.left.launch(name, alias, () => this.run(name, alias));
  }

  /**
   * Takes (and gives) until the alias's shard answers done. The alias's canonical item and run are
   * read once: an alias is kept for good, so they never change while it runs.
   */
  private async run(name: string, alias: string): Promise<void> {
    const named = await this.cache.withBoard(name, (board) => this.store.lookup(board, alias));
    let acked: number | undefined = 0;
    while (named && acked !== undefined) {
      if (this.runs.stopping) return;
      const after: number = acked;
      acked = await this.cache.withBoard(name, (board) => this.take(board, alias, named.item, named.run, after));
    }
    await this.store.finished(name, alias);
  }

  /**
   * One take, and the give of its chunk on the canonical item's shard (the take gives it itself when
   * both are on one shard), given again while that shard still drains expired data first (seq 0).
   * Answers the seq given (the caller's next `acked`), undefined when done; a stop before the give
   * answers `acked` unchanged, so the next run's take answers the same chunk again.
   */
  private async take(board: PreparedBoard, alias: string, item: string, run: string, acked: number) {
    const here = board.shardOf(alias) === board.shardOf(item);
    const most = here ? ALIAS_STEP_UNITS / 2 : ALIAS_STEP_UNITS;
    const step = { alias, item, run, most, fresh: true, here, acked, seq: 0, chunk: '' };
    const taken = await this.store.step(board, { ...step, mode: 'take', nowMs: this.clock.nowMs() });
    if (taken.done) return undefined;
    if (taken.seq === 0 || here) return Math.max(acked, taken.seq);
    const give = { ...step, mode: 'give' as const, seq: taken.seq, chunk: taken.chunk };
    while ((await this.store.step(board, { ...give, nowMs: this.clock.nowMs() })).seq === 0) {
      if (this.runs.stopping) return acked;
    }
    return taken.seq;
  }
}

/** Aliases merge sums (every metric's, on a board with metrics): a max / min / last board is refused (400). */
function checkBoard(board: PreparedBoard): void {
  if (keptScore(board.config) !== undefined) throw new InvalidInputError(M.aliasOnBoard(board.config.name));
}
