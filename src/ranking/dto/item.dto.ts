import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, Max, Min, NotEquals, ValidateNested } from 'class-validator';
import {
  IsId,
  IsName,
  IsOptionalNotNull,
  MAX_PAGE_LIMIT,
  MAX_PAGE_OFFSET,
  PageLimit,
  PageOffset,
  ToInt,
} from '../../common/dto';
import { FastValidated } from '../../common/validation';
import { amountBodyCheck, batchBodyCheck, idFieldsCheck, MAX_AMOUNT, windowQueryCheck } from './fast-checks';

const AmountRules = () => (target: object, key: string) => {
  // Registration order is check order: with stopAtFirstError the type error comes first.
  IsOptionalNotNull()(target, key);
  IsInt()(target, key);
  NotEquals(0, { message: '$property must not be zero' })(target, key);
  Min(-MAX_AMOUNT)(target, key);
  Max(MAX_AMOUNT)(target, key);
};

@FastValidated(idFieldsCheck(ItemParams, { board: 'name', item: 'id' }))
export class ItemParams {
  @ApiProperty({ description: 'Board name', example: 'posts' })
  @IsName()
  board!: string;

  @ApiProperty({ description: 'Item id: 1-128 printable characters, URL-encoded', example: 'post-42' })
  @IsId()
  item!: string;
}

@FastValidated(idFieldsCheck(LikeParams, { board: 'name', item: 'id', userId: 'id' }))
export class LikeParams extends ItemParams {
  @ApiProperty({ description: 'User id: 1-128 printable characters, URL-encoded', example: 'user-7' })
  @IsId()
  userId!: string;
}

@FastValidated(amountBodyCheck(IncrementDto))
export class IncrementDto {
  @ApiPropertyOptional({
    description: 'Amount to add (negative subtracts)',
    default: 1,
    minimum: -MAX_AMOUNT,
    maximum: MAX_AMOUNT,
    not: { enum: [0] },
  })
  @AmountRules()
  amount?: number;
}

export class BatchEntryDto {
  @ApiProperty({ description: 'Item id: 1-128 printable characters', example: 'post-42' })
  @IsId()
  item!: string;

  @ApiPropertyOptional({
    description: 'Amount to add (negative subtracts)',
    default: 1,
    minimum: -MAX_AMOUNT,
    maximum: MAX_AMOUNT,
  })
  @AmountRules()
  amount?: number;
}

@FastValidated(batchBodyCheck(BatchIncrementDto, BatchEntryDto))
export class BatchIncrementDto {
  @ApiProperty({ type: [BatchEntryDto], minItems: 1, maxItems: 1000 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @ValidateNested({ each: true })
  @Type(() => BatchEntryDto)
  items!: BatchEntryDto[];
}

@FastValidated(idFieldsCheck(LikeDto, { userId: 'id' }))
export class LikeDto {
  @ApiProperty({ description: 'User id: 1-128 printable characters', example: 'user-7' })
  @IsId()
  userId!: string;
}

@FastValidated(windowQueryCheck(WindowQuery))
export class WindowQuery {
  @ApiPropertyOptional({ description: "Window name (default: the board's first window)", example: '24h' })
  @IsOptionalNotNull()
  @IsName()
  window?: string;
}

@FastValidated(windowQueryCheck(TopQuery, { limit: [1, MAX_PAGE_LIMIT], offset: [0, MAX_PAGE_OFFSET] }))
export class TopQuery extends WindowQuery {
  @PageLimit(10)
  limit?: number;

  @PageOffset()
  offset?: number;
}

@FastValidated(windowQueryCheck(AroundQuery, { radius: [1, 100] }))
export class AroundQuery extends WindowQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 5, description: 'Neighbours on each side' })
  @IsOptionalNotNull()
  @ToInt()
  @Max(100)
  @Min(1)
  @IsInt()
  radius?: number;
}

export class StandingDto {
  @ApiProperty({ description: 'Sum over the live slots of the window' }) score!: number;
  @ApiProperty({ nullable: true, type: Number, description: 'Competition rank (1, 2, 2, 4); null when score <= 0' })
  rank!: number | null;
}

const WINDOWS_SCHEMA = {
  type: 'object',
  additionalProperties: { $ref: '#/components/schemas/StandingDto' },
  description: 'Per window name',
} as const;

export class IncrementResultDto {
  @ApiProperty() board!: string;
  @ApiProperty() item!: string;
  @ApiProperty(WINDOWS_SCHEMA) windows!: Record<string, StandingDto>;
  @ApiProperty({ description: 'True while an expired slot larger than one chunk is still being subtracted' })
  draining!: boolean;
}

export class BatchResultDto {
  @ApiProperty() board!: string;
  @ApiProperty({ description: 'Entries applied' }) count!: number;
  @ApiProperty() draining!: boolean;
}

export class LikeResultDto extends IncrementResultDto {
  @ApiProperty() userId!: string;
  @ApiProperty({ description: 'Whether this call changed the counts' }) counted!: boolean;
}

export class ListedItemDto {
  @ApiProperty() rank!: number;
  @ApiProperty() item!: string;
  @ApiProperty() score!: number;
}

export class WindowFiguresDto {
  @ApiProperty() board!: string;
  @ApiProperty() window!: string;
  @ApiProperty({ description: 'Start of the oldest live slot (unix s)' }) from!: number;
  @ApiProperty({ description: 'End of the current slot (unix s)' }) to!: number;
  @ApiProperty({ description: 'True while an expired slot larger than one chunk is still being subtracted' })
  draining!: boolean;
}

export class TopResultDto extends WindowFiguresDto {
  @ApiProperty({ type: [ListedItemDto], description: 'Highest score first; ties in descending byte order of item id' })
  items!: ListedItemDto[];
}

export class AroundResultDto extends TopResultDto {
  @ApiProperty() item!: string;
}

export class ItemResultDto extends WindowFiguresDto {
  @ApiProperty() item!: string;
  @ApiProperty() score!: number;
  @ApiProperty({ nullable: true, type: Number }) rank!: number | null;
  @ApiProperty({
    nullable: true,
    type: Number,
    description: 'Share (%) of the other ranked items scoring at or below this one',
  })
  percentile!: number | null;
}
