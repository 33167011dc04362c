import { functionSet } from '../../redis/function-library';
import type { IdemCall } from '../../redis/idempotency';
import { idempotentFunction } from '../../redis/named-function';
import { BoardCall, rowsOf, versionHeader, WindowCall, windowReadFunction } from '../core/script-call';
import { sliceFunctions } from '../core/slice-functions';
import { ARCHIVE_INDEX_PERIODS_PER_CHANGE, ARCHIVE_INDEX_ROWS_PER_CHANGE } from '../core/ranking.limits';

/** An item's moderation state; null: none (listed, or on a review board waiting for review). */
export type ModerationState = 'hidden' | 'allowed';

/** A state as a shard answers it: "" is none. */
function stateOf(answered: string): ModerationState | null {
  return answered === '' ? null : (answered as ModerationState);
}

/** The bound of a change's update of the archives' kept exception positions (snapshot_shown_lib's index_change_end). */
const ARCHIVE_BOUND = {
  archive_periods: ARCHIVE_INDEX_PERIODS_PER_CHANGE,
  archive_rows: ARCHIVE_INDEX_ROWS_PER_CHANGE,
};

/** What one shard answers about moderation: a state set, a page of its review queue. */
export const MODERATION_FUNCTIONS = functionSet('tbRank', {
  moderationSet: idempotentFunction({
    numberOfKeys: 1,
    args: ['item', 'state', 'most', 'archive_periods', 'archive_rows'],
    reply: ['previous', 'held'],
    build: (call: BoardCall & { item: string; state: ModerationState | null; most: number; idem?: IdemCall }) => ({
      keys: [call.shard.keys.cfg()],
      header: versionHeader(call),
      args: { item: call.item, state: call.state ?? '', most: call.most, ...ARCHIVE_BOUND },
    }),
    decode: (reply) => ({ previous: stateOf(reply.string('previous')), held: reply.int('held') }),
  }),

  moderationGroupSet: idempotentFunction({
    numberOfKeys: 1,
    args: ['group', 'state', 'apply', 'archive_periods', 'archive_rows'],
    reply: ['previous', 'groups', 'items', 'archived'],
    build: (call: BoardCall & { group: string; state: ModerationState | null; apply: boolean; idem?: IdemCall }) => ({
      keys: [call.shard.keys.cfg()],
      header: versionHeader(call),
      args: { group: call.group, state: call.state ?? '', apply: call.apply ? 1 : 0, ...ARCHIVE_BOUND },
    }),
    decode: (reply) => ({
      previous: stateOf(reply.string('previous')),
      groups: reply.int('groups'),
      items: reply.int('items'),
      archived: reply.int('archived'),
    }),
  }),

  moderationQueue: windowReadFunction({
    args: ['offset', 'limit'],
    reply: ['draining', 'rows'],
    values: (call: WindowCall & { offset: number; limit: number }) => ({ offset: call.offset, limit: call.limit }),
    decode: (reply) => ({ draining: reply.flag('draining'), rows: rowsOf(reply.nested('rows')) }),
  }),
});

/** The moderation slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class ModerationFunctions extends sliceFunctions(MODERATION_FUNCTIONS) {}
