import { bareHeader, callArgs } from '../../redis/function-args';
import { decodeIdempotent, IDEM_FIELDS, IdemCall, idemNamedArgs } from '../../redis/idempotency';
import { typedFunction } from '../../redis/function-library';
import { NamedReply } from '../../redis/replies';
import { rowsOf, BoardCall, windowReadFunction, WindowCall } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';

const SET_ARGS = ['item', 'state', 'most', ...IDEM_FIELDS] as const;
const SET_REPLY = ['previous', 'held'] as const;
const GROUP_SET_ARGS = ['group', 'state', 'apply', ...IDEM_FIELDS] as const;
const GROUP_SET_REPLY = ['previous', 'groups', 'items'] as const;
const QUEUE_ARGS = ['offset', 'limit'] as const;
const QUEUE_REPLY = ['draining', 'rows'] as const;

/** An item's moderation state; null: none (listed, or on a review board waiting for review). */
export type ModerationState = 'hidden' | 'allowed';

/** What one shard answers about moderation: a state set, a page of its review queue. */
export const MODERATION_FUNCTIONS = {
  moderationSet: typedFunction({
    name: 'tbRankModerationSet',
    handler: 'moderation_set',
    numberOfKeys: 1,
    contract: { args: SET_ARGS, reply: SET_REPLY },
    build: (call: BoardCall & { item: string; state: ModerationState | null; most: number; idem?: IdemCall }) => ({
      keys: [call.shard.keys.cfg()],
      args: callArgs({ ...bareHeader(call.nowMs), version: call.board.config.version }, SET_ARGS, {
        item: call.item,
        state: call.state ?? '',
        most: call.most,
        ...idemNamedArgs(call.idem, ''),
      }),
    }),
    decode: (raw, call) =>
      // After idem_lib's outcome and context: the contract's reply, in SET_REPLY's order.
      decodeIdempotent('tbRankModerationSet', raw, call.idem, (reply) => {
        reply.expectLength(SET_REPLY.length);
        const previous = reply.string(SET_REPLY.indexOf('previous'));
        return {
          previous: previous === '' ? null : (previous as ModerationState),
          held: reply.int(SET_REPLY.indexOf('held')),
        };
      }),
  }),

  moderationGroupSet: typedFunction({
    name: 'tbRankModerationGroupSet',
    handler: 'moderation_group_set',
    numberOfKeys: 1,
    contract: { args: GROUP_SET_ARGS, reply: GROUP_SET_REPLY },
    build: (call: BoardCall & { group: string; state: ModerationState | null; apply: boolean; idem?: IdemCall }) => ({
      keys: [call.shard.keys.cfg()],
      args: callArgs({ ...bareHeader(call.nowMs), version: call.board.config.version }, GROUP_SET_ARGS, {
        group: call.group,
        state: call.state ?? '',
        apply: call.apply ? 1 : 0,
        ...idemNamedArgs(call.idem, ''),
      }),
    }),
    decode: (raw, call) =>
      decodeIdempotent('tbRankModerationGroupSet', raw, call.idem, (reply) => {
        reply.expectLength(GROUP_SET_REPLY.length);
        const previous = reply.string(GROUP_SET_REPLY.indexOf('previous'));
        return {
          previous: previous === '' ? null : (previous as ModerationState),
          groups: reply.int(GROUP_SET_REPLY.indexOf('groups')),
          items: reply.int(GROUP_SET_REPLY.indexOf('items')),
        };
      }),
  }),

  moderationQueue: windowReadFunction({
    name: 'tbRankModerationQueue',
    handler: 'moderation_queue',
    args: QUEUE_ARGS,
    reply: QUEUE_REPLY,
    values: (call: WindowCall & { offset: number; limit: number }) => ({ offset: call.offset, limit: call.limit }),
    decode: (raw) => {
      const reply = new NamedReply('tbRankModerationQueue', QUEUE_REPLY, raw);
      return { draining: reply.flag('draining'), rows: rowsOf(reply.nested('rows'), 0) };
    },
  }),
};

/** The moderation slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ModerationFunctions extends sliceFunctions(MODERATION_FUNCTIONS) {}
