import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { NextCursorProperty } from '../../common/dto';
import { CALENDARS, Calendar, WEEK_STARTS, WeekStart } from '../core/calendar-math';
import { SHARDS_PER_BOARD } from '../core/ranking.limits';
import { AGGREGATES, type Aggregate } from '../core/aggregate';
import { VIEW_MODES, type ViewMode } from '../core/trending-math';
import { TiesMode, TiesViewProperty } from '../options/ties/ties.option';
import { CapPerItemViewProperty } from '../options/actor-caps/actor-caps.option';
import { OrderViewProperty, ScoreOrder } from '../options/order/order.option';
import { TiebreakSetting, TiebreakViewProperty } from '../options/tiebreak/tiebreak.option';
import { LeaguesSetting, LeaguesViewProperty } from '../options/leagues/leagues.option';
import { GroupsViewProperty } from '../options/groups/groups.option';
import { GroupOfSetting, GroupOfViewProperty } from '../options/group-of/group-of.option';
import { ModerationSettingsDto, ModerationViewProperty } from '../options/moderation/moderation.option';
import { MetricsViewProperty } from '../options/metrics/metrics.option';
import { TailSetting, TailViewProperty } from '../options/tail/tail.option';
import { SegmentsDto, SegmentsViewProperty } from '../options/segments/segments.option';
import { ActorsViewProperty } from '../options/actors/actors.option';
import { ArchiveDto, SnapshotsDto } from './board.dto';

/** A board as GET /admin/boards answers it: every setting it holds (options only when on). */
export class WindowViewDto {
  @ApiProperty() name!: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'seconds (absent on an all-time window)' })
  period?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'seconds (absent on an all-time window)' })
  interval?: number;
  @ApiPropertyOptional({ description: 'Present (true) on an all-time window' }) allTime?: boolean;
  @ApiPropertyOptional({ type: SnapshotsDto, description: 'Present when the window keeps snapshots' })
  snapshots?: SnapshotsDto;
  @ApiPropertyOptional({ enum: CALENDARS, description: 'Present on a calendar window' }) calendar?: Calendar;
  @ApiPropertyOptional({ description: 'Calendar windows: the IANA time zone' }) timeZone?: string;
  @ApiPropertyOptional({ enum: WEEK_STARTS, description: 'Calendar week windows' }) weekStart?: WeekStart;
  @ApiPropertyOptional({ type: ArchiveDto, description: 'Present when a calendar window keeps archives' })
  archive?: ArchiveDto;
}

export class ViewViewDto {
  @ApiProperty() name!: string;
  @ApiProperty({ enum: VIEW_MODES }) mode!: ViewMode;
  @ApiProperty() window!: string;
  @ApiPropertyOptional({ type: 'integer', description: 'decay: seconds' }) halfLife?: number;
  @ApiPropertyOptional({ type: 'integer', description: 'hot: seconds' }) tau?: number;
  @ApiPropertyOptional({ description: 'rising: the baseline window' }) baseline?: string;
  @ApiPropertyOptional({ type: 'integer', description: 'rising' }) minCount?: number;
  @ApiPropertyOptional({ description: 'wilson, controversial: the positive metric' }) positive?: string;
  @ApiPropertyOptional({ description: 'wilson, controversial: the negative metric' }) negative?: string;
}

export class BoardViewDto {
  @ApiProperty() name!: string;
  @ApiProperty({ type: 'integer', minimum: SHARDS_PER_BOARD.min, maximum: SHARDS_PER_BOARD.max }) shards!: number;
  @ApiProperty({ type: [WindowViewDto] }) windows!: WindowViewDto[];
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Most items the board holds; absent: no cap' })
  maxItems?: number;
  @ApiPropertyOptional({ type: [ViewViewDto], description: 'Trending views; absent: none' })
  views?: ViewViewDto[];
  @TiesViewProperty()
  ties?: TiesMode;
  @OrderViewProperty()
  order?: ScoreOrder;

  @TiebreakViewProperty()
  tiebreak?: TiebreakSetting;
  @LeaguesViewProperty()
  leagues?: LeaguesSetting;
  @ModerationViewProperty()
  moderation?: ModerationSettingsDto;
  @MetricsViewProperty()
  metrics?: string[];
  @TailViewProperty()
  tail?: TailSetting;
  @ApiPropertyOptional({ enum: AGGREGATES, description: 'Present when not sum' })
  aggregate?: Aggregate;
  @SegmentsViewProperty()
  segments?: SegmentsDto;
  @ActorsViewProperty()
  actors?: boolean;
  @CapPerItemViewProperty()
  capPerItem?: number;
  @GroupsViewProperty()
  groups?: boolean;
  @GroupOfViewProperty()
  groupOf?: GroupOfSetting;
}

export class BoardListDto {
  @ApiProperty({ type: [BoardViewDto] }) boards!: BoardViewDto[];
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description:
      'Registered board names; for a moment it may count a board whose PUT or DELETE is under way (not listed)',
  })
  total!: number;
  @NextCursorProperty()
  nextCursor!: string | null;
}
