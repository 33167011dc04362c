import { Injectable } from '@nestjs/common';
import { Clock } from '../../common/clock';
import { InvalidInputError, NotFoundError } from '../../common/errors';
import type { WriteAnswer } from '../../common/retry-safe';
import { BoardCache } from '../boards/board-cache';
import { PreparedBoard } from '../core/board';
import { ResumableRuns, runnerKey } from '../core/left-running';
import { ledgerWindowOf } from '../core/ledger-window';
import { WEIGHED_ACTORS_PER_BOARD } from '../core/ranking.limits';
import { ActorWeightsStore, ReweightRecord } from './actor-weights.store';

/** What PUT and GET /admin/boards/:board/actors/:actor answer. */
export interface ActorWeightView {
  actor: string;
  weight: number;
  state: 'running' | 'done';
  /** Live events of the actor counted again so far, each once (not per window). */
  events: number;
}

/**
 * Actor weights: a PUT stores the weight on every shard (the first step of each, after which every new
 * event of the actor counts at it) and re-weights the actor's live contributions in bounded steps run
 * in the background; every step is safe to repeat, so a restart or a second instance only runs the
 * rest again (a GET of one still running that no local runner holds resumes it).
 */
@Injectable()
export class ActorWeightsService extends ResumableRuns {
  constructor(
    private readonly store: ActorWeightsStore,
    private readonly cache: BoardCache,
    private readonly clock: Clock,
  ) {
    super(store, 'ActorWeights', {
      plural: 're-weightings',
      one: (board) => `re-weighting of an actor on board "${board}"`,
      gone: (error) => error instanceof NotFoundError || error instanceof InvalidInputError,
    });
  }

  /** Sets the actor's weight; a repeat of the weight it has (a retry too) changes nothing. */
  async put(name: string, actor: string, weight: number): Promise<WriteAnswer<ActorWeightView>> {
    const board = await this.cache.get(name);
    if (!board.config.actors)
      throw new InvalidInputError(`actor: board "${name}" keeps no actors, so no actor of it has a weight`);
    const before = await this.find(board, actor);
    if (before.weight === weight && before.state === 'done') return { replayed: false, body: before };
    await this.cache.withBoard(name, async (fresh) => {
      // Shard 0 counts the board's weighed actors: a refusal there leaves every shard as it was.
      await this.step(fresh, 0, actor, weight, WEIGHED_ACTORS_PER_BOARD);
      await Promise.all(fresh.shards.slice(1).map((_, k) => this.step(fresh, k + 1, actor, weight, 0)));
    });
    await this.store.running(name, actor, this.clock.nowMs());
    this.launch(name, actor);
    return { replayed: false, body: await this.get(name, actor) };
  }

  async get(name: string, actor: string): Promise<ActorWeightView> {
    const board = await this.cache.get(name);
    if (!board.config.actors)
      throw new InvalidInputError(`actor: board "${name}" keeps no actors, so no actor of it has a weight`);
    return this.find(board, actor);
  }

  /** The re-weighting as the records say; one still running that no local runner holds is resumed. */
  private async find(board: PreparedBoard, actor: string): Promise<ActorWeightView> {
    const records = await this.store.records(board, actor);
    const name = board.config.name;
    const view = viewOf(actor, records, await this.store.weight(board, actor));
    if (view.state === 'running' && !this.runs.has(runnerKey(name, actor))) this.launch(name, actor);
    return view;
  }

  private launch(name: string, actor: string): void {
    this.left.launch(name, actor, () => this.run(name, actor));
  }

  /** Steps every shard until each answers done (a board that lost shards meanwhile: the ones left). */
  private async run(name: string, actor: string): Promise<void> {
    for (let shard = 0; ; shard++) {
      let done = false;
      while (!done) {
        if (this.runs.stopping) return;
        const step = await this.cache.withBoard(name, async (board) =>
          shard < board.shards.length ? this.step(board, shard, actor, 0) : undefined,
        );
        if (step === undefined) {
          await this.store.finished(name, actor);
          return;
        }
        done = step.done;
      }
    }
  }

  /** A step; `places` given: a PUT's first step on the shard, counting that many places there (0: none). */
  private step(board: PreparedBoard, shard: number, actor: string, weight: number, places?: number) {
    return this.store.step(board, board.shards[shard], {
      actor,
      weight,
      fresh: places !== undefined,
      places: places ?? 0,
      most: this.store.stepUnits,
      ledgerWindow: ledgerWindowOf(board),
      nowMs: this.clock.nowMs(),
    });
  }
}

/** The shards' records as one re-weighting: done once every shard's is (none left: done, at the stored weight). */
function viewOf(actor: string, records: ReweightRecord[], storedWeight: number): ActorWeightView {
  const kept = records.filter((record) => record.state !== undefined);
  return {
    actor,
    weight: kept.length > 0 ? Number(kept[0].weight) : storedWeight,
    state: kept.every((record) => record.state === 'done') ? 'done' : 'running',
    events: kept.reduce((total, record) => total + Number(record.events ?? 0), 0),
  };
}
