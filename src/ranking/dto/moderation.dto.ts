import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, Matches } from 'class-validator';
import { CompiledValidation, ID_FIELD, NAME_FIELD } from '../../common/compiled-checks';
import {
  IdProperty,
  IsOptionalNotNull,
  NameProperty,
  OptionalIntProperty,
  OptionalNameProperty,
} from '../../common/dto';
import { DEFAULT_QUEUE_PAGE, QUEUE_DEPTH_ITEMS, QUEUE_PAGE } from '../core/ranking.limits';
import { ItemResultDto } from './item.dto';

export const MODERATION_STATES = ['hidden', 'allowed'] as const;

export class ModerationStateDto {
  @ApiProperty({
    enum: MODERATION_STATES,
    description:
      'hidden: no read lists the item (its counts keep accruing); allowed: listed again, and on a review board listed at all',
  })
  @IsIn(MODERATION_STATES, { message: `state must be one of ${MODERATION_STATES.join(', ')}` })
  state!: (typeof MODERATION_STATES)[number];
}

@CompiledValidation({ board: NAME_FIELD, group: ID_FIELD })
export class GroupParams {
  @NameProperty('Board name', 'posts')
  board!: string;

  @IdProperty('Group id (URL-encoded), compared after NFC normalisation like an item id', 'author-7')
  group!: string;
}

export class ModerationQueueQuery {
  @OptionalNameProperty('Window name (default: the first window)', '24h')
  window?: string;

  @OptionalIntProperty(
    QUEUE_PAGE,
    { default: DEFAULT_QUEUE_PAGE, description: 'Rows of the page' },
    { fromQuery: true },
  )
  limit?: number;

  @ApiPropertyOptional({
    description: `nextCursor of the previous page (omitted: the first page); the queue is read at most ${QUEUE_DEPTH_ITEMS} deep (cursor + limit)`,
  })
  @IsOptionalNotNull()
  @Matches(/^[0-9]{1,4}$/, { message: 'cursor must be a nextCursor answered by the previous page' })
  cursor?: string;
}

export class QueueRowDto {
  @ApiProperty() item!: string;
  @ApiProperty() score!: number;
}

export class ModerationQueueDto {
  @ApiProperty() board!: string;
  @ApiProperty() window!: string;
  @ApiProperty({
    type: [QueueRowDto],
    description: 'Items waiting for review (listed once allowed), highest score first',
  })
  items!: QueueRowDto[];
  @ApiProperty({ type: 'string', nullable: true, description: 'The next page: send it as cursor; null: the last page' })
  nextCursor!: string | null;
}

/** The `hidden` flag of an item's answers (GET …/items/:item, lookup rows). */
export const HiddenProperty = () =>
  ApiPropertyOptional({
    enum: [true],
    description:
      'Present when moderation leaves the item out of every listing (hidden, or waiting for review): rank null',
  });

/** GET …/items/:item: the item's standing, and whether moderation leaves it out. */
export class ModeratedItemResultDto extends ItemResultDto {
  @HiddenProperty() hidden?: true;
  @ApiPropertyOptional({
    description: 'The item asked is an alias (PUT /admin/boards/:board/aliases/:alias): the canonical item answered',
  })
  canonical?: string;
  @ApiPropertyOptional({
    type: [String],
    description:
      "The item's alternate spellings (aliases naming it, PUT /admin/boards/:board/aliases/:alias), in byte order; absent: none",
  })
  aliases?: string[];
}
