import { functionSet } from '../../redis/function-library';
import type { IdemCall } from '../../redis/idempotency';
import { idempotentFunction, namedFunction } from '../../redis/named-function';
import { bareHeader } from '../../redis/function-args';
import type { BoardKeys } from '../core/ranking.keys';
import { BoardCall, boardHeader, windowReadFunction, WindowCall } from '../core/script-call';
import type { WindowConfig } from '../core/window-math';
import { sliceFunctions } from '../core/slice-functions';

/** The limits a membership change is checked against (group-of.limits.ts). */
export interface MemberLimits {
  boards: number;
  groups: number;
  perGroup: number;
  members: number;
  /** Counted members the records of the group board's kept listings hold together (group_history_out_lib). */
  recordedMembers: number;
}

/** One shard's part of a sharded settle round (group_shard_step.lua). */
export interface ShardStep {
  rule: string;
  top: number;
  /** group, generation pairs flattened */
  clears: string[];
  fetches: string[];
  most: number;
}

/** Group boards (src/ranking/options/group-of/): memberships and settling, on the member board's shard. */
export const GROUP_BOARDS_FUNCTIONS = functionSet('tbRank', {
  groupMemberSet: idempotentFunction({
    numberOfKeys: 1,
    args: ['board', 'window', 'item', 'group', 'rule', 'boards', 'groups', 'per_group', 'members', 'recorded_members'],
    reply: ['previous'],
    /** The header holds the member window's rule: the call crosses its boundary first (group_history_lib). */
    build: (
      call: BoardCall & {
        groupBoard: string;
        window: WindowConfig;
        item: string;
        group: string;
        rule: string;
        limits: MemberLimits;
        idem?: IdemCall;
      },
    ) => ({
      keys: [call.shard.keys.cfg()],
      header: boardHeader(call, [call.window]),
      args: {
        board: call.groupBoard,
        window: call.window.name,
        item: call.item,
        group: call.group,
        rule: call.rule,
        boards: call.limits.boards,
        groups: call.limits.groups,
        per_group: call.limits.perGroup,
        members: call.limits.members,
        recorded_members: call.limits.recordedMembers,
      },
    }),
    decode: (reply) => ({ previous: reply.string('previous') || null }),
  }),

  groupSettle: windowReadFunction({
    args: ['board', 'top', 'decay', 'rows'],
    reply: ['draining'],
    values: (call: WindowCall & { groupBoard: string; top: number; decay: number; rows: number }) => ({
      board: call.groupBoard,
      top: call.top,
      decay: call.decay,
      rows: call.rows,
    }),
    decode: (reply) => ({ draining: reply.flag('draining') }),
  }),

  groupShardStep: windowReadFunction({
    args: ['board', 'rule', 'top', 'clears', 'fetches', 'most'],
    reply: ['draining', 'rows', 'dirty', 'parts'],
    values: (call: WindowCall & { groupBoard: string; step: ShardStep }) => ({
      board: call.groupBoard,
      rule: call.step.rule,
      top: call.step.top,
      clears: JSON.stringify(call.step.clears),
      fetches: JSON.stringify(call.step.fetches),
      most: call.step.most,
    }),
    decode: (reply) => ({
      draining: reply.flag('draining'),
      rows: JSON.parse(reply.string('rows')) as Array<[string, string[]]>,
      dirty: JSON.parse(reply.string('dirty')) as string[],
      parts: reply.number('parts'),
    }),
  }),

  groupScoresStore: namedFunction({
    numberOfKeys: 1,
    args: ['board', 'window', 'rule', 'token', 'groups', 'scores'],
    reply: ['token', 'stored'],
    /** `shard`: shard 0's keys of the member board; token "": a claim of `groups`, else a store of `scores`. */
    build: (call: {
      shard: BoardKeys;
      groupBoard: string;
      window: string;
      rule: string;
      token: string;
      groups: string[];
      scores: string[];
    }) => ({
      keys: [call.shard.cfg()],
      header: bareHeader(0),
      args: {
        board: call.groupBoard,
        window: call.window,
        rule: call.rule,
        token: call.token,
        groups: JSON.stringify(call.groups),
        scores: JSON.stringify(call.scores),
      },
    }),
    decode: (reply) => ({ token: reply.string('token'), stored: JSON.parse(reply.string('stored')) as string[] }),
  }),

  groupHistoryParts: namedFunction({
    numberOfKeys: 1,
    args: ['board', 'window', 'upto', 'at', 'after', 'rows', 'boards'],
    reply: ['parts', 'since', 'groups', 'last', 'noted'],
    /** The shard's recorded parts (group_parts_lib), or a page of one's groups (`page`), or (`upto`) drops those at or before it. */
    build: (call: PartsCall) => ({
      keys: [call.shard.cfg()],
      header: bareHeader(0),
      args: {
        board: call.groupBoard,
        window: call.window,
        upto: call.upto ?? '',
        at: call.page?.atSec ?? '',
        after: call.page?.after ?? 0,
        rows: call.page?.rows ?? 0,
        boards: call.boards ?? 0,
      },
    }),
    decode: (reply) => ({
      parts: partsOf(reply.string('parts')),
      since: reply.number('since'),
      groups: groupsOf(reply.string('groups')),
      last: reply.number('last'),
      noted: reply.number('noted'),
    }),
  }),

  groupHistoryStore: namedFunction({
    numberOfKeys: 1,
    args: [
      'board',
      'window',
      'at',
      'interval',
      'keep',
      'top',
      'rule',
      'room',
      'boards',
      'token',
      'first',
      'groups',
      'listing',
      'noted',
    ],
    reply: ['state', 'rows'],
    /** `shard`: shard 0's keys of the member board, where the merged listing is kept. */
    build: (call: HistoryStoreCall) => ({
      keys: [call.shard.cfg()],
      header: bareHeader(call.nowMs),
      args: {
        board: call.groupBoard,
        window: call.window,
        at: call.atSec,
        interval: call.intervalSec,
        keep: call.keep,
        top: call.top,
        rule: call.rule,
        room: call.room,
        boards: call.boards,
        token: call.token,
        first: call.first ? 1 : 0,
        groups: JSON.stringify(call.groups),
        listing: call.listing ? JSON.stringify(call.listing) : '',
        noted: call.noted,
      },
    }),
    decode: (reply) => ({ state: reply.string('state') as 'kept' | 'stale' | 'ok', rows: reply.number('rows') }),
  }),
});

/** A group_history_parts call: the parts, a page of one's groups, or (`upto`) a drop. */
export interface PartsCall {
  shard: BoardKeys;
  groupBoard: string;
  window: string;
  upto: number | null;
  /** The groups of the part at `atSec` after the `after`-th recorded, at most `rows` members (one group whatever its size). */
  page?: { atSec: number; after: number; rows: number };
  /**
   * Shard 0's listing of its parts, the merge's first call there: group boards over one member board at
   * most (MAX_GROUP_BOARDS_PER_MEMBER), the group board named there so a retraction notes its items
   * (group_parts_lib's merge_began); the answer's `noted` the newest note then.
   */
  boards?: number;
}

/** One shard's part of a kept listing (group_parts_lib): per group, [item, score, retracted (0|1), ...]. */
export interface ListingPart {
  atSec: number;
  over: boolean;
  groups: Array<[string, Array<string | number>]>;
  /** The shard ran no call in the slot ending at `atSec` (its state then, recorded at a later crossing). */
  quiet: boolean;
}

/** A shard's recorded part as group_history_parts lists it: its groups are read a page at a time. */
export interface PartEntry {
  atSec: number;
  over: boolean;
  /** The groups it recorded. */
  groups: number;
  /** The shard ran no call in the slot ending at `atSec` (its state then, recorded at a later crossing). */
  quiet: boolean;
}

/** A shard's parts as group_history_parts lists them. */
function partsOf(text: string): PartEntry[] {
  const parsed = JSON.parse(text) as Array<[number, number, number, number]>;
  return parsed.map(([atSec, over, groups, quiet]) => ({ atSec, over: over === 1, groups, quiet: quiet === 1 }));
}

/** A page of a part's groups (cjson writes an empty table as {}). */
function groupsOf(text: string): ListingPart['groups'] {
  const parsed = JSON.parse(text) as unknown;
  return Array.isArray(parsed) ? (parsed as ListingPart['groups']) : [];
}

/** A merged listing for shard 0 to keep (group_history_store.lua). */
export interface HistoryStoreCall {
  shard: BoardKeys;
  groupBoard: string;
  window: string;
  nowMs: number;
  atSec: number;
  /** 0: a calendar window's archive. */
  intervalSec: number;
  keep: number;
  top: number;
  rule: string;
  room: number;
  boards: number;
  /** The merge's: its calls write one record of the listing's counted members. */
  token: string;
  /** The merge's first call: the record starts afresh. */
  first: boolean;
  /** A page of the listing's groups in its order: [group, score, counted members [item, score, ...]] */
  groups: Array<[string, string, string[]]>;
  /** The last call's: every group [group, score] (null: more pages follow). */
  listing: Array<[string, string]> | null;
  /** The newest retraction noted on shard 0 when the merge began: the last call applies those after it. */
  noted: number;
}

/** The group boards slice's part of tb_ranking, injected into its store (RankingCoreModule builds it). */
export class GroupBoardsFunctions extends sliceFunctions(GROUP_BOARDS_FUNCTIONS) {}
