import { functionSet } from '../../redis/function-library';
import { namedFunction } from '../../redis/named-function';
import { BoardCall, recordStep, versionHeader } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

/** An alias named on shard 0 (alias_put.lua): the board's alias map. */
export interface AliasPutCall extends BoardCall {
  alias: string;
  /** The canonical item as sent (an alias there stands for its own canonical item). */
  item: string;
  /** The id of the merge a new alias starts. */
  run: string;
  /** Aliases the board may hold. */
  most: number;
}

export interface AliasPutReply {
  status: 'created' | 'exists' | 'conflict' | 'full';
  item: string;
  run: string;
  held: number;
}

/** A take (the alias's shard) or a give (the canonical item's shard) of an alias merge (alias_step.lua). */
export interface AliasStepCall extends BoardCall {
  mode: 'take' | 'give';
  alias: string;
  item: string;
  run: string;
  /** Most units of work a take does. */
  most: number;
  /** The PUT's first take: starts the record, blocks the alias's events. */
  fresh: boolean;
  /** The canonical item is on the alias's shard: the take gives its chunk in the same call. */
  here: boolean;
  /** Take: the last chunk the caller saw given. */
  acked: number;
  /** Give: the chunk's seq and its entries (a take's answer). */
  seq: number;
  chunk: string;
  /** The merge's record on this shard (take) or the given-seq record (give). */
  record: string;
}

/** A step's answer: done (take), the chunk taken or given and its seq (0: none), entries taken so far, a due time. */
export interface AliasStepReply {
  done: boolean;
  seq: number;
  chunk: string;
  entries: number;
  dueMs: number;
}

/** Aliases: the map on shard 0, and the merges' bounded, repeatable steps. */
export const ALIASES_FUNCTIONS = functionSet('tbRank', {
  aliasPut: namedFunction({
    numberOfKeys: 1,
    args: ['alias', 'item', 'run', 'most'],
    reply: ['status', 'item', 'run', 'held'],
    build: (call: AliasPutCall) => ({
      keys: [call.shard.keys.cfg()],
      header: versionHeader(call),
      args: {
        alias: call.alias,
        item: call.item,
        run: call.run,
        most: call.most,
      },
    }),
    decode: (reply): AliasPutReply => ({
      status: reply.string('status') as AliasPutReply['status'],
      item: reply.string('item'),
      run: reply.string('run'),
      held: reply.int('held'),
    }),
  }),

  aliasStep: namedFunction({
    numberOfKeys: 'dynamic',
    args: ['mode', 'alias', 'item', 'run', 'most', 'fresh', 'here', 'acked', 'seq', 'chunk'],
    reply: ['done', 'seq', 'chunk', 'entries', 'due'],
    build: recordStep((call: AliasStepCall) => ({
      mode: call.mode,
      alias: call.alias,
      item: call.item,
      run: call.run,
      most: call.most,
      fresh: call.fresh ? 1 : 0,
      here: call.here ? 1 : 0,
      acked: call.acked,
      seq: call.seq,
      chunk: call.chunk,
    })),
    decode: (reply): AliasStepReply => ({
      done: reply.flag('done'),
      seq: reply.int('seq'),
      chunk: reply.string('chunk'),
      entries: reply.int('entries'),
      dueMs: reply.int('due'),
    }),
  }),
});

/** The aliases slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class AliasesFunctions extends sliceFunctions(ALIASES_FUNCTIONS) {}
