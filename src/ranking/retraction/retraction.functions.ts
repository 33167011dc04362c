import { Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { BoardCall, boardArgs } from '../core/script-call';

/** One step of an actor's retraction on one shard (retract_step.lua). */
export interface RetractStepCall extends BoardCall {
  id: string;
  actor: string;
  /** Most contributions the step takes out, over every window. */
  most: number;
  /** The window (0-based) whose contributions count the retraction's events and amount. */
  ledgerWindow: number;
  /** Refuse the actor's new events until then (unix ms; 0: no block). */
  blockUntilMs: number;
}

/** The record after a step: finished, what this step took, and the totals so far. */
export interface RetractStepReply {
  done: boolean;
  taken: number;
  events: number;
  amount: number;
}

/** Retractions: an actor's contributions taken out of a shard in bounded, repeatable steps. */
export const RETRACTION_FUNCTIONS = {
  retractStep: typedFunction({
    name: 'tbRankRetractStep',
    handler: 'retract_step',
    numberOfKeys: 'dynamic',
    build: (call: RetractStepCall) => ({
      keys: [...call.shard.incrementKeys, call.shard.keys.retraction(call.id)],
      args: [...boardArgs(call), call.actor, call.most, call.ledgerWindow, call.blockUntilMs],
    }),
    decode: (raw): RetractStepReply => {
      const reply = new Reply('tbRankRetractStep', raw).expectLength(4);
      return { done: reply.flag(0), taken: reply.int(1), events: reply.int(2), amount: reply.int(3) };
    },
  }),
};
