import { Declared, functionSet } from '../../redis/function-library';
import { bareHeader, callArgs } from '../../redis/function-args';
import { namedFunction } from '../../redis/named-function';
import type { BoardKeys } from '../core/ranking.keys';
import { NamedReply } from '../../redis/replies';
import { BoardCall, boardHeader } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

const STEP_ARGS = ['target', 'most', 'ledger', 'block_until_ms', 'block_key'] as const;
const STEP_REPLY = ['done', 'taken', 'events', 'amount', 'grouped'] as const;

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
  /** An item's shard names group boards over the board (an item on a shard naming none is in no group). */
  grouped: boolean;
}

/**
 * A retraction's step function: the actor's (retract_step) and the item's (retract_item) take the same
 * call on the shard's increment keys and its record, and answer the same record.
 */
const retractFunction: Declared<RetractStepCall, RetractStepReply> = (id) => ({
  ...id,
  numberOfKeys: 'dynamic',
  contract: { args: STEP_ARGS, reply: STEP_REPLY },
  build: (call: RetractStepCall) => ({
    keys: [...call.shard.incrementKeys, call.shard.keys.retraction(call.id)],
    args: stepArgs(call),
  }),
  decode: (raw): RetractStepReply => stepReply(id.name, raw),
});

/** Retractions: an actor's contributions taken out of a shard in bounded, repeatable steps. */
export const RETRACTION_FUNCTIONS = functionSet('tbRank', {
  retractStep: retractFunction,
  retractItem: retractFunction,
  /** An item out of the group boards' listings kept on shard 0 of a sharded member board (group_parts_lib). */
  groupHistoryRetract: namedFunction({
    numberOfKeys: 2,
    args: ['windows', 'item', 'most'],
    reply: ['done', 'taken'],
    /** `shard`: shard 0's keys of the member board; its record of the retraction holds the cursors. */
    build: (call: { shard: BoardKeys; id: string; windows: string[]; item: string; most: number; nowMs: number }) => ({
      keys: [call.shard.cfg(), call.shard.retraction(call.id)],
      header: bareHeader(call.nowMs),
      args: { windows: JSON.stringify(call.windows), item: call.item, most: call.most },
    }),
    decode: (reply) => ({ done: reply.flag('done'), taken: reply.number('taken') }),
  }),
});

function stepArgs(call: RetractStepCall) {
  return callArgs(boardHeader(call), STEP_ARGS, {
    target: call.target,
    most: call.most,
    ledger: call.ledgerWindow,
    block_until_ms: call.blockUntilMs,
    block_key: call.blockKey,
  });
}

function stepReply(name: string, raw: unknown): RetractStepReply {
  const reply = new NamedReply(name, STEP_REPLY, raw);
  return {
    done: reply.flag('done'),
    taken: reply.int('taken'),
    events: reply.int('events'),
    amount: reply.int('amount'),
    grouped: reply.flag('grouped'),
  };
}

/** The retraction slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class RetractionFunctions extends sliceFunctions(RETRACTION_FUNCTIONS) {}
