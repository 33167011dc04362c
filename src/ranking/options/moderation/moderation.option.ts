import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { settingProperties } from '../../../common/dto';
import { fieldSetting, type BoardOption, luaModulesIn } from '../board-option';

/** The board's `moderation` object. */
export class ModerationSettingsDto {
  @ApiProperty({
    description:
      'true: the board lists an item only once an admin allowed it (PUT /admin/boards/:board/moderation/items/:item); the others wait in the review queue, still counting. false: every item is listed unless hidden',
  })
  @IsBoolean({ message: 'moderation.review must be true or false' })
  review!: boolean;
}

/** The option's part of a board config. */
export interface ModerationConfig {
  /** Present with review: true on a review board; absent: items are listed unless hidden. */
  moderation?: { review: boolean };
}

/** The board PUT's `moderation` field and the board view's (present on a review board). */
export const { put: ModerationProperty, view: ModerationViewProperty } = settingProperties(
  ModerationSettingsDto,
  'moderation must be an object like { "review": true }',
  'Moderation of the listing: { "review": true } lists an item only once allowed. Hidden items are left out of every listing of any board. Omitted: the current setting (no review for a new board). A change keeps every count and state',
  'Present on a review board',
);

const reviews = (config: Readonly<ModerationConfig>) => config.moderation?.review === true;

/**
 * Moderation: moderation_lib.lua keeps each shard's item states and answers order_lib which items
 * its listings leave out (hidden ones, or on a review board all but the allowed ones);
 * moderation_count_lib.lua counts them ahead of a write's record in each window's kept index of their scores;
 * moderation_history_lib.lua adds, for reads of kept listings, the archived items of moderated groups.
 */
export const moderationOption: BoardOption<ModerationConfig> = {
  ...fieldSetting<ModerationConfig>('moderation', { put: ModerationProperty, view: ModerationViewProperty }),
  luaModules: luaModulesIn(__dirname, 'moderation_lib.lua', 'moderation_count_lib.lua', 'moderation_history_lib.lua'),
  fromStored: (fields) => (fields.modreview === '1' ? { moderation: { review: true } } : {}),
  fromReply: (fields) => {
    const setting = fields.moderation as { review?: unknown } | undefined;
    if (setting === undefined || setting.review === false) return {};
    if (setting.review === true) return { moderation: { review: true } };
    throw new Error(`moderation ${JSON.stringify(setting)} is not { review: boolean }`);
  },
  view: (config) => (reviews(config) ? { moderation: { review: true } } : {}),
};
