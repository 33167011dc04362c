import { ApiProperty } from '@nestjs/swagger';
import { IdProperty, NameProperty } from '../../common/dto';

export class AliasParams {
  @NameProperty('Board name', 'posts')
  board!: string;

  @IdProperty('The alias: another spelling of an item', 'Post-42')
  alias!: string;
}

export class PutAliasDto {
  @IdProperty(
    'The canonical item the alias stands for (an alias sent here stands for its own canonical item)',
    'post-42',
  )
  item!: string;
}

export class AliasDto {
  @ApiProperty({ description: "The merge's id" }) id!: string;
  @ApiProperty() alias!: string;
  @ApiProperty({ description: 'The canonical item' }) item!: string;
  @ApiProperty({
    enum: ['running', 'done'],
    description:
      'done: every live window, view, segment and unique count answers as if every live event of the alias had named the canonical item',
  })
  state!: 'running' | 'done';
  @ApiProperty({
    type: 'integer',
    description: "The alias's slot amounts and actor contributions moved so far (each window's and segment's)",
  })
  entries!: number;
}
