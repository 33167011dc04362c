import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { CompiledValidation, NAME_FIELD, optional } from '../../common/compiled-checks';
import { NameProperty, OptionalIntProperty, ToInt } from '../../common/dto';
import { UNIX_SEC } from '../../common/limits';
import { SHARDS_PER_BOARD } from '../core/ranking.limits';
import {
  LEAGUE_COHORTS,
  LEAGUE_MOVES_DEFAULT,
  LEAGUE_MOVES_LIMIT,
  LEAGUE_SIZE,
} from '../options/leagues/leagues.limits';

const COHORT_OFFSET = { min: 0, max: LEAGUE_SIZE.max };
// A cursor is a place in a shard's moves times the shards, plus the shard (leagues.service.ts).
const MOVES_CURSOR = { min: 0, max: LEAGUE_COHORTS.max * LEAGUE_SIZE.max * SHARDS_PER_BOARD.max };
const int = (range: { min: number; max: number }) => optional({ kind: 'int', range, fromQuery: true });

@CompiledValidation({
  board: NAME_FIELD,
  tier: NAME_FIELD,
  cohort: { kind: 'int', range: LEAGUE_COHORTS, fromQuery: true },
})
export class CohortParams {
  @NameProperty('Board name', 'players')
  board!: string;

  @NameProperty("Tier name (one of the board's leagues.tiers)", 'silver')
  tier!: string;

  @ApiProperty({ type: 'integer', minimum: LEAGUE_COHORTS.min, maximum: LEAGUE_COHORTS.max, example: 1 })
  @ToInt()
  @IsInt()
  @Min(LEAGUE_COHORTS.min)
  @Max(LEAGUE_COHORTS.max)
  cohort!: number;
}

@CompiledValidation({ limit: int(LEAGUE_SIZE), offset: int(COHORT_OFFSET) })
export class CohortQuery {
  @OptionalIntProperty(
    LEAGUE_SIZE,
    { default: LEAGUE_SIZE.max, description: 'Rows (default: the whole cohort)' },
    { fromQuery: true },
  )
  limit?: number;

  @OptionalIntProperty(COHORT_OFFSET, { default: 0 }, { fromQuery: true })
  offset?: number;
}

@CompiledValidation({ at: int(UNIX_SEC), limit: int(LEAGUE_MOVES_LIMIT), cursor: int(MOVES_CURSOR) })
export class MovesQuery {
  @OptionalIntProperty(
    UNIX_SEC,
    { description: 'Unix s: the closed period holding it (default: the latest closed one)' },
    { fromQuery: true },
  )
  at?: number;

  @OptionalIntProperty(LEAGUE_MOVES_LIMIT, { default: LEAGUE_MOVES_DEFAULT }, { fromQuery: true })
  limit?: number;

  @OptionalIntProperty(
    MOVES_CURSOR,
    { description: 'The page after the one whose nextCursor this is (default: the first)' },
    { fromQuery: true },
  )
  cursor?: number;
}

const Span = () =>
  applyDecorators(ApiProperty({ type: 'integer', description: "The league window's period bound, unix s" }));

export class ItemLeagueDto {
  @ApiProperty() board!: string;
  @ApiProperty() item!: string;
  @ApiProperty({ description: "The item's tier this period" }) tier!: string;
  @ApiProperty({ type: 'integer' }) cohort!: number;
  @Span() from!: number;
  @Span() to!: number;
  @ApiProperty({ type: 'integer', description: 'Within the cohort: 1 + the members scoring more' }) rank!: number;
  @ApiProperty({ description: "Its score in the league window's period" }) score!: number;
  @ApiProperty({ type: 'integer', description: 'Items in the cohort' }) members!: number;
}

export class CohortRowDto {
  @ApiProperty({ type: 'integer' }) rank!: number;
  @ApiProperty() item!: string;
  @ApiProperty() score!: number;
}

export class CohortPageDto {
  @ApiProperty() board!: string;
  @ApiProperty() tier!: string;
  @ApiProperty({ type: 'integer' }) cohort!: number;
  @Span() from!: number;
  @Span() to!: number;
  @ApiProperty({ type: [CohortRowDto] }) items!: CohortRowDto[];
}

export class LeagueMoveDto {
  @ApiProperty() item!: string;
  @ApiProperty() fromTier!: string;
  @ApiProperty() toTier!: string;
  @ApiProperty({ type: 'integer', description: 'Its cohort in the closed period' }) cohort!: number;
  @ApiProperty({ type: 'integer', description: 'Its rank in that cohort' }) rank!: number;
}

export class MovesPageDto {
  @Span() from!: number;
  @Span() to!: number;
  @ApiProperty({ type: [LeagueMoveDto] }) moves!: LeagueMoveDto[];
  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    description: 'Pass as ?cursor= for the next page; null: no more',
  })
  nextCursor!: string | null;
}
