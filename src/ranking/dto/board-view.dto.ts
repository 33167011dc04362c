import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { NextCursorProperty } from '../../common/dto';
import type { Calendar, WeekStart } from '../options/calendar/calendar-math';
import {
  ArchiveDto,
  ArchiveViewProperty,
  CalendarViewProperty,
  TimeZoneViewProperty,
  WeekStartViewProperty,
} from '../options/calendar/calendar.option';
import { SHARDS_PER_BOARD } from '../core/ranking.limits';
import type { Aggregate } from '../options/aggregate/aggregate';
import { AggregateViewProperty } from '../options/aggregate/aggregate.option';
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
import { SnapshotsDto, SnapshotsViewProperty } from '../options/snapshots/snapshots.option';
import { ViewViewDto, ViewsViewProperty } from '../options/views/views.option';

/** A board as GET /admin/boards answers it: every setting it holds (options only when on). */
export class WindowViewDto {
  @ApiProperty() name!: string;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'seconds (absent on an all-time window)' })
  period?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'seconds (absent on an all-time window)' })
  interval?: number;
  @ApiPropertyOptional({ description: 'Present (true) on an all-time window' }) allTime?: boolean;
  @SnapshotsViewProperty()
  snapshots?: SnapshotsDto;
  @CalendarViewProperty() calendar?: Calendar;
  @TimeZoneViewProperty() timeZone?: string;
  @WeekStartViewProperty() weekStart?: WeekStart;
  @ArchiveViewProperty() archive?: ArchiveDto;
}

export class BoardViewDto {
  @ApiProperty() name!: string;
  @ApiProperty({ type: 'integer', minimum: SHARDS_PER_BOARD.min, maximum: SHARDS_PER_BOARD.max }) shards!: number;
  @ApiProperty({ type: [WindowViewDto] }) windows!: WindowViewDto[];
  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'Most items the board holds; absent: no cap' })
  maxItems?: number;
  @ViewsViewProperty()
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
  @AggregateViewProperty()
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
