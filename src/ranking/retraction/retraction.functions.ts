import { Reply } from '../../redis/replies';
import { typedFunction } from '../../redis/function-library';
import { BoardCall, boardArgs } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

/** One step of a retraction on one shard: of an actor (retract_step.lua) or an item (retract_item.lua). */
export interface RetractStepCall extends BoardCall {
  id: string;
  /** The actor or the item retracted. */
  target: string;
  /** Most units of work the step does: contributions (an actor), or slots, contributions and snapshots (an item). */
  most: number;
  /** The window (0-based) whose contributions count the retraction's events and amount. */
  ledgerWindow: number;
  /** Refuse the actor's new events until then (unix ms; 0: no block). */
  blockUntilMs: number;
  /** What the block binds: the actor's block key (blockKeyOf), the item itself. */
  blockKey: string;
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
      args: stepArgs(call),
    }),
    decode: (raw): RetractStepReply => stepReply('tbRankRetractStep', raw),
  }),

  retractItem: typedFunction({
    name: 'tbRankRetractItem',
    handler: 'retract_item',
    numberOfKeys: 'dynamic',
    build: (call: RetractStepCall) => ({
      keys: [...call.shard.incrementKeys, call.shard.keys.retraction(call.id)],
      args: stepArgs(call),
    }),
    decode: (raw): RetractStepReply => stepReply('tbRankRetractItem', raw),
  }),
};

function stepArgs(call: RetractStepCall): Array<string | number> {
  return [...boardArgs(call), call.target, call.most, call.ledgerWindow, call.blockUntilMs, call.blockKey];
}

function stepReply(name: string, raw: unknown): RetractStepReply {
  const reply = new Reply(name, raw).expectLength(4);
  return { done: reply.flag(0), taken: reply.int(1), events: reply.int(2), amount: reply.int(3) };
}

/** The retraction slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class RetractionFunctions extends sliceFunctions(RETRACTION_FUNCTIONS) {}
