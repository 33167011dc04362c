import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsObject, ValidateNested } from 'class-validator';
import {
  IsOptionalNotNull,
  NameProperty,
  OptionalDurationProperty,
  OptionalIntProperty,
  OptionalNameProperty,
} from '../../../common/dto';
import { modulesOnly, settingFields, type BoardOption, luaModulesIn } from '../board-option';
import { ViewMetricProperty } from '../metrics/metrics.option';
import { VIEW_MODES, type ViewMode } from './trending-math';
import {
  DECAY_MAX_HALF_LIVES_PER_WINDOW,
  DEFAULT_HOT_TAU_SEC,
  DEFAULT_RISING_MIN_COUNT,
  RISING_MIN_COUNT,
  VIEWS_PER_BOARD,
} from './views.limits';

/** One view of a board PUT's `views`. */
export class ViewDto {
  @NameProperty('View name (read with ?window=<name>); not a window name', 'trending')
  name!: string;

  @ApiProperty({
    enum: VIEW_MODES,
    description:
      'decay, hot, rising, unique, or on a board with metrics wilson or controversial (see docs/trending.md)',
  })
  @IsIn(VIEW_MODES, { message: `$property must be one of ${VIEW_MODES.join(', ')}` })
  mode!: string;

  @NameProperty('The window the view reads (rising: the short window)', '1h')
  window!: string;

  @OptionalDurationProperty(
    `decay only, required: the half-life; the window may span at most ${DECAY_MAX_HALF_LIVES_PER_WINDOW} half-lives`,
    '30m',
  )
  halfLife?: string | number;

  @OptionalDurationProperty(`hot only: τ, the age worth a factor 10 of score (default ${DEFAULT_HOT_TAU_SEC} s)`, '12h')
  tau?: string | number;

  @OptionalNameProperty("rising only, required: the baseline window, longer than the view's window", '24h')
  baseline?: string;

  @OptionalIntProperty(RISING_MIN_COUNT, {
    description: 'rising only: least observed count of a listed item',
    default: DEFAULT_RISING_MIN_COUNT,
  })
  minCount?: number;

  @ViewMetricProperty('positive')
  positive?: string;

  @ViewMetricProperty('negative')
  negative?: string;
}

/** The board PUT's `views`: the type first, then their count, then each view. */
export const ViewsProperty = () =>
  applyDecorators(
    ApiPropertyOptional({
      type: [ViewDto],
      maxItems: VIEWS_PER_BOARD.max,
      description: 'Trending views beside the windows. Omitted: the stored views are kept; [] removes them',
    }),
    IsOptionalNotNull(),
    IsArray(),
    ArrayMaxSize(VIEWS_PER_BOARD.max),
    IsObject({ each: true, message: '$property must hold objects like { "name": "...", "mode": "..." }' }),
    ValidateNested({ each: true }),
    Type(() => ViewDto),
  );

/** One view as the board's view answers it (durations in seconds). */
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

/** The board view's `views` (present when the board has some). */
export const ViewsViewProperty = () =>
  ApiPropertyOptional({ type: [ViewViewDto], description: 'Trending views; absent: none' });

/** The option's field of the board PUT body. */
export interface ViewsPut {
  views?: ViewDto[];
}

/** The option's field of the board's view. */
interface ViewsView {
  views?: ViewViewDto[];
}

/**
 * Trending views (decay, hot, rising, unique; wilson and controversial with metrics): views_lib.lua
 * keeps each view's results beside the windows it reads, segment_views_lib.lua a segment's,
 * view_except_lib.lua lists them without the board's exceptions, view_decay_lib.lua keeps decay's scale.
 *
 * Its config is not an options fragment: a board's views are resolved against its windows
 * (resolveViews: durations, defaults, each view's `spec`), stored as their own config field and rebuilt
 * by views_lib on a change, so the board PUT and its view carry them as `views` (ViewsProperty), the
 * board config as ViewConfig[], and the fields here stay empty.
 */
export const viewsOption: BoardOption<object, object, ViewsPut> = {
  ...modulesOnly(
    'views',
    luaModulesIn(__dirname, 'views_lib.lua', 'view_decay_lib.lua', 'segment_views_lib.lua', 'view_except_lib.lua'),
  ),
  ...settingFields<ViewsPut, ViewsView>('views', { put: ViewsProperty, view: ViewsViewProperty }),
};
