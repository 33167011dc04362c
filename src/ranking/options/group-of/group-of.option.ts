import { ApiPropertyOptional } from '@nestjs/swagger';
import { InvalidInputError } from '../../../common/errors';
import { OptionalCheckedProperty } from '../../../common/dto';
import { isName } from '../../../common/names';
import { settingFields, type BoardOption, type BoardSettings, luaModulesIn } from '../board-option';
import { GROUP_TOP_MEMBERS } from './group-of.limits';

/** A group board's setting: it ranks groups of the member board's items in one of its windows. */
export interface GroupOfSetting {
  /** The member board. */
  board: string;
  /** A window of the member board. */
  window: string;
  /** A group's score sums its `top` best members' scores. */
  top: number;
  /** The i-th best member (i = 0 for the best) weighs decay^i; 0 < decay <= 1 (1 when omitted). */
  decay: number;
}

/** The option's part of a board config. */
export interface GroupOfConfig {
  /** The board ranks groups of another board's items; absent: off. */
  groupOf?: GroupOfSetting;
}

/** Why a group board, its member board or a write to it may not go (INVALID_INPUT 400; memberNotPlain: GROUP_MEMBER_UNSUPPORTED 400; readOnly: GROUP_BOARD_READ_ONLY 409). */
export const GROUP_OF_MESSAGES = {
  ownMember: (board: string) => `groupOf.board names board "${board}" itself; name another board`,
  notWithout: (board: string, what: string) =>
    `board "${board}" ranks groups (groupOf): it declares no ${what} of its own; leave them out`,
  ownOrder: (board: string) =>
    `board "${board}" ranks groups (groupOf) in its member board's order (asc: the lowest group score first), equal scores sharing a rank; leave out order and ties`,
  memberNotPlain: (board: string, member: string, what: string) =>
    `group board "${board}": its member board "${member}" has ${what}, which group boards do not support yet (a group's score sums single scores of one counter); use a member board without a tiebreak or metrics`,
  noSuchWindow: (board: string, member: string, window: string) =>
    `group board "${board}": member board "${member}" has no window "${window}"`,
  readOnly: (board: string, member = 'its member board') =>
    `board "${board}" ranks groups (groupOf): its scores come from "${member}"; write to that board and set memberships (PUT /boards/${board}/members/:group/:item)`,
  notGroupBoard: (board: string) => `board "${board}" declares no groupOf: it has no members`,
  windowOfGroupBoard: (board: string, window: string, member: string) =>
    `group board "${board}" ranks window "${member}" of its member board: read it without window (or window=${member}), not "${window}"`,
};

const SETTING_MESSAGE = `groupOf must be an object like { "board": "players", "window": "week", "top": 5, "decay": 0.5 } (board and window names, top ${GROUP_TOP_MEMBERS.min}-${GROUP_TOP_MEMBERS.max}, 0 < decay <= 1, default 1)`;

function validSetting(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { board, window, top, decay, ...rest } = value as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || !isName(board) || !isName(window)) return false;
  if (typeof top !== 'number' || !Number.isInteger(top)) return false;
  if (top < GROUP_TOP_MEMBERS.min || top > GROUP_TOP_MEMBERS.max) return false;
  return decay === undefined || (typeof decay === 'number' && decay > 0 && decay <= 1);
}

/** The board PUT's `groupOf` field: its schema and validation. */
const SCHEMA = {
  type: 'object' as const,
  properties: {
    board: { type: 'string' as const },
    window: { type: 'string' as const },
    top: { type: 'integer' as const, minimum: GROUP_TOP_MEMBERS.min, maximum: GROUP_TOP_MEMBERS.max },
    decay: { type: 'number' as const, minimum: 0, exclusiveMinimum: true, maximum: 1 },
  },
  required: ['board', 'window', 'top'],
  example: { board: 'players', window: 'week', top: 5, decay: 0.5 },
};

/** The board view's `groupOf` field (decay filled in). */
export const GroupOfViewProperty = () =>
  ApiPropertyOptional({ ...SCHEMA, description: 'A group board: what it ranks (see PUT); absent: not one' });

export const GroupOfProperty = () =>
  OptionalCheckedProperty('isGroupOfSetting', validSetting, () => SETTING_MESSAGE, {
    ...SCHEMA,
    description: `A group board: ranks groups (teams, clans, countries) of the member board's items. A group's score is the sum of decay^i x s_i over its \`top\` best members' scores s_i in that window (i = 0 for the best); members join with PUT /boards/:board/members/:group/:item. The board then declares no windows, views, segments or actors, and answers reads without \`window\`, with from/to of the member window. ${SETTING_MESSAGE}`,
  });

/** The setting as a group board holds it: decay filled in. */
export function groupOfSetting(value: { board: string; window: string; top: number; decay?: number }): GroupOfSetting {
  return { board: value.board, window: value.window, top: value.top, decay: value.decay ?? 1 };
}

/**
 * The windows a group board holds (it declares none): one all-time window named as the member window,
 * never written; its reads are the groups' (RankedSources, src/ranking/group-boards/).
 */
export function groupBoardWindows(setting: { window: string }): { name: string; allTime: true }[] {
  return [{ name: setting.window, allTime: true }];
}

/** `groupOf`: group_of_lib.lua keeps the groups' scores under the member board's hash tag (group_members_lib.lua: which members count), group_history_lib.lua their history (group_parts_lib.lua: over a sharded member board, each shard's part of it), group_history_out_lib.lua what an item retraction rewrites of it. */
export const groupOfOption: BoardOption<GroupOfConfig> = {
  ...settingFields<GroupOfConfig>('groupOf', { put: GroupOfProperty, view: GroupOfViewProperty }),
  name: 'group_of',
  fields: ['groupOf'],
  luaModules: luaModulesIn(
    __dirname,
    'group_members_lib.lua',
    'group_of_lib.lua',
    'group_part_pages_lib.lua',
    'group_parts_lib.lua',
    'group_history_lib.lua',
    'group_history_out_lib.lua',
  ),
  fromStored: (fields) =>
    fields.groupOf === undefined ? {} : { groupOf: groupOfSetting(JSON.parse(fields.groupOf) as GroupOfSetting) },
  fromReply: (fields) => {
    if (fields.groupOf === undefined || fields.groupOf === null) return {};
    if (!validSetting(fields.groupOf)) throw new Error(`groupOf ${JSON.stringify(fields.groupOf)}: ${SETTING_MESSAGE}`);
    return { groupOf: groupOfSetting(fields.groupOf as GroupOfSetting) };
  },
  view: (config) => (config.groupOf ? { groupOf: config.groupOf } : {}),
  check: (board: BoardSettings) => {
    const setting = board.options.groupOf as GroupOfSetting | undefined;
    if (setting === undefined) return;
    if (setting.board === board.name) throw new InvalidInputError(GROUP_OF_MESSAGES.ownMember(board.name));
    const holds = board.holds;
    if (holds?.views) throw new InvalidInputError(GROUP_OF_MESSAGES.notWithout(board.name, 'views'));
    if (holds?.segments) throw new InvalidInputError(GROUP_OF_MESSAGES.notWithout(board.name, 'segments'));
    if (holds?.actors) throw new InvalidInputError(GROUP_OF_MESSAGES.notWithout(board.name, 'actors'));
    if (board.options.order === 'asc' || board.options.ties === 'first')
      throw new InvalidInputError(GROUP_OF_MESSAGES.ownOrder(board.name));
  },
};
