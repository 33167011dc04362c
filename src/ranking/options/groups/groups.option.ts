import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { FieldRule, ID_FIELD, optional } from '../../../common/compiled-checks';
import { IsId, IsOptionalNotNull } from '../../../common/dto';
import { InvalidInputError } from '../../../common/errors';
import { ID_LENGTH_CHARS } from '../../../common/limits';
import { ID_RULE } from '../../../common/names';
import { flagSetting, settingFields, type BoardOption, luaModulesIn } from '../board-option';
import { GROUPS_MESSAGES } from './groups.limits';

/** The option's part of a board config. */
export interface GroupsConfig {
  /** Writes may name each item's group (its author, channel or domain); absent: they may not. */
  groups?: boolean;
}

/**
 * Cost units a groups board adds to each results place of a write: none counted. Its windows take the
 * watched path, whose hook answers at once unless the item left (then one HEXISTS), and a write naming
 * a group adds one HSET per request, not per place, so a unit per place would overweigh it. Not
 * measured apart from a plain entry yet.
 */
export const GROUPS_WRITE_COST = 0;

/** The board PUT's `groups` field. */
export const GroupsProperty = () =>
  applyDecorators(
    IsBoolean({ message: 'groups must be true or false' }),
    IsOptionalNotNull(),
    ApiPropertyOptional({
      type: 'boolean',
      description:
        "Lets increments and batch entries name a `group` (an author, channel or domain): the latest one names the item's group, rows carry it, and `?perGroup=` / POST .../query filter by it. Omitted: the current setting (off for a new board). Turning it off forgets every group",
    }),
  );

/** The board view's `groups` field (present when on). */
export const GroupsViewProperty = () =>
  ApiPropertyOptional({ enum: [true], description: 'Present when writes may name an item group' });

/** A row's `group` (absent: none). */
export const RowGroupProperty = () =>
  ApiPropertyOptional({ description: 'The item\'s group, on a board with "groups": true (absent: none)' });

/** A filtered page's `truncated` flag. */
export const TruncatedProperty = () =>
  ApiPropertyOptional({
    description:
      'With perGroup, minActors or POST .../query: true when the bounded scan stopped before the page was full (one group or the excluded ones hold the whole head, or few items of it have minActors actors); the rows listed are exact',
  });

/** A write's optional group: the compiled check's rule. */
export const GROUP_FIELD: FieldRule = optional(ID_FIELD);

/** A write's optional `group` and its OpenAPI schema (validated like an item id). */
export const GroupProperty = () =>
  applyDecorators(
    ApiPropertyOptional({
      description: `The item's group (${ID_RULE}) on a board with "groups": true (elsewhere 400): the latest write naming one sets it`,
      example: 'author-7',
      minLength: ID_LENGTH_CHARS.min,
      maxLength: ID_LENGTH_CHARS.max,
    }),
    IsOptionalNotNull(),
    IsId(),
  );

/** Refuses (400 naming `field`) a group on a board that keeps none. */
export function checkGroup(field: string, group: string | undefined, board: { name: string } & GroupsConfig): void {
  if (group === undefined || board.groups === true) return;
  throw new InvalidInputError(GROUPS_MESSAGES.noGroups(board.name, field));
}

const on = (config: Readonly<GroupsConfig>) => config.groups === true;

/** `groups: true`: groups_lib.lua keeps each shard's item -> group map. */
export const groupsOption: BoardOption<GroupsConfig> = {
  ...settingFields<GroupsConfig>('groups', { put: GroupsProperty, view: GroupsViewProperty }),
  ...flagSetting('groups', luaModulesIn(__dirname, 'groups_lib.lua')),
  writeCostPerPlace: (config) => (on(config) ? GROUPS_WRITE_COST : 0),
};
