import { CompiledValidation, NAME_FIELD, optional } from '../../common/compiled-checks';
import { OptionalIntProperty, OptionalNameProperty } from '../../common/dto';
import { FILTER_QUERY_FIELDS, MinActorsProperty, PerGroupProperty } from '../../ranking/dto/lookup.dto';
import { METRIC_FIELD, MetricProperty } from '../../ranking/options/metrics/metrics.option';
import { DEFAULT_STREAM_ROWS, STREAM_ROWS } from '../live.limits';

@CompiledValidation({
  window: optional(NAME_FIELD),
  segment: optional(NAME_FIELD),
  limit: optional({ kind: 'int', range: STREAM_ROWS, fromQuery: true }),
  ...FILTER_QUERY_FIELDS,
  metric: METRIC_FIELD,
})
export class StreamQuery {
  @OptionalNameProperty("Window name (default: the board's first window)", '24h')
  window?: string;

  @OptionalNameProperty("Segment: the window's rows as that segment's (a board with segments only)", 'en')
  segment?: string;

  @OptionalIntProperty(STREAM_ROWS, { default: DEFAULT_STREAM_ROWS, description: 'Rows watched' }, { fromQuery: true })
  limit?: number;

  /** The stream's rows as GET top?perGroup= lists them: rows keep their board rank. */
  @PerGroupProperty() perGroup?: number;

  /** The stream's rows as GET top?minActors= lists them: rows keep their board rank. */
  @MinActorsProperty() minActors?: number;

  /** The stream's rows as GET top?metric= lists them. */
  @MetricProperty('The counter the rows rank by') metric?: string;
}
