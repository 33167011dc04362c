import { functionSet } from '../../redis/function-library';
import { namedFunction } from '../../redis/named-function';
import { BoardCall, recordStep } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

/** One step of an actor's re-weighting on one shard (reweight_step.lua). */
export interface ReweightStepCall extends BoardCall {
  actor: string;
  /** The weight a PUT asks (a later step: the record's holds). */
  weight: number;
  /** Most units of work the step does. */
  most: number;
  /** The window (0-based) whose contributions count the events. */
  ledgerWindow: number;
  /** The PUT's first step on this shard: stores the weight, starts the record again when it differs. */
  fresh: boolean;
  /** Weighed actors the board may hold, counted by this step's shard (0: not counted there). */
  places: number;
  /** The record's key on this shard. */
  record: string;
}

/** The record after a step: finished, contributions looked at, live events counted again so far, its weight. */
export interface ReweightStepReply {
  done: boolean;
  taken: number;
  events: number;
  weight: number;
}

/** Actor weights: an actor's live contributions counted again at its new weight, in bounded repeatable steps. */
export const ACTOR_WEIGHTS_FUNCTIONS = functionSet('tbRank', {
  reweightStep: namedFunction({
    numberOfKeys: 'dynamic',
    args: ['actor', 'weight', 'most', 'ledger', 'fresh', 'places'],
    reply: ['done', 'taken', 'events', 'weight'],
    build: recordStep((call: ReweightStepCall) => ({
      actor: call.actor,
      weight: call.weight,
      most: call.most,
      ledger: call.ledgerWindow,
      fresh: call.fresh ? 1 : 0,
      places: call.places,
    })),
    decode: (reply): ReweightStepReply => ({
      done: reply.flag('done'),
      taken: reply.int('taken'),
      events: reply.int('events'),
      weight: reply.int('weight'),
    }),
  }),
});

/** The actor-weights slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ActorWeightsFunctions extends sliceFunctions(ACTOR_WEIGHTS_FUNCTIONS) {}
