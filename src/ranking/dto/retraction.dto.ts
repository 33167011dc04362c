import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';
import { IdProperty, IsDuration, IsId, IsOptionalNotNull, NameProperty } from '../../common/dto';
import { DURATION_SEC } from '../../common/limits';

export class StartRetractionDto {
  @ApiPropertyOptional({
    description: 'The actor whose events every window, view and unique count loses',
    example: 'user-7',
  })
  @IsOptionalNotNull()
  @IsId()
  actor?: string;

  @ApiPropertyOptional({
    description:
      'Or an item to retract: out of every window, view, unique count, snapshot and archive, its data removed',
    example: 'post-42',
  })
  @IsOptionalNotNull()
  @IsId()
  item?: string;

  @ApiPropertyOptional({
    description:
      "Refuse the actor's (or the item's) new events for this long (403 RETRACTED): seconds, or like 30s, 5m, 1h, 7d",
    example: '1d',
    oneOf: [
      { type: 'integer', minimum: DURATION_SEC.min, maximum: DURATION_SEC.max },
      { type: 'string', pattern: '^[1-9][0-9]*[smhd]?$' },
    ],
  })
  @IsOptionalNotNull()
  @IsDuration()
  block?: string | number;
}

export class RetractionParams {
  @NameProperty('Board name', 'posts')
  board!: string;

  @IdProperty('Retraction id, as POST answered it', '0b7e9a8e-7c1f-4bb0-9d1c-2f5b1d3c9e10')
  @IsUUID('4', { message: 'id must be a retraction id (a UUID)' })
  id!: string;
}

export class RetractionDto {
  @ApiProperty() id!: string;
  @ApiPropertyOptional({ description: 'An actor retraction' }) actor?: string;
  @ApiPropertyOptional({ description: 'An item retraction' }) item?: string;
  @ApiProperty({ enum: ['running', 'done'] }) state!: 'running' | 'done';
  @ApiProperty({
    type: 'integer',
    description: 'Events retracted so far, each counted once (not per window; of an item, those that carried an actor)',
  })
  events!: number;
  @ApiProperty({ type: 'integer', description: 'Their amounts summed' }) amount!: number;
  @ApiProperty({ type: 'integer', description: 'When it started, unix s' }) startedAt!: number;
}
