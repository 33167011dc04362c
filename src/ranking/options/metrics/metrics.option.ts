import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, Matches } from 'class-validator';
import { DomainError, InvalidInputError } from '../../../common/errors';
import { IsOptionalNotNull } from '../../../common/dto';
import type { FieldRule } from '../../../common/compiled-checks';
import { optional } from '../../../common/compiled-checks';
import { fieldSetting, type BoardOption, type BoardSettings, luaModulesIn } from '../board-option';
import { ARCHIVE_KEEP, ARCHIVE_TOP_ITEMS } from '../calendar/calendar.limits';
import { SNAPSHOT_KEEP, SNAPSHOT_TOP_ITEMS } from '../snapshots/snapshots.limits';

/** How many metrics a board declares (`metrics`), when it declares any. */
export const METRICS_PER_BOARD = { min: 2, max: 8 } as const;

/** A metric's name: it goes into key names (`<window>~@<metric>`), so a short word. */
export const METRIC_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
export const METRIC_RULE = '1-32 characters of a-z 0-9 _, starting with a letter';

/** The option's part of a board config. */
export interface MetricsConfig {
  /** Several counters per item per window (the first: the board's own windows); absent: one. */
  metrics?: string[];
}

/** What the option refuses (INVALID_INPUT, 400; UNKNOWN_METRIC, 400). */
export const METRICS_MESSAGES = {
  unknownMetric: (board: string, metric: string, known: readonly string[]) =>
    known.length === 0
      ? `board "${board}" declares no metrics: send no metric`
      : `board "${board}" has no metric "${metric}"; its metrics: ${known.join(', ')}`,
  metricsNeedSum: (board: string) =>
    `metrics count events: board "${board}" aggregates scores (max, min or last); use aggregate sum`,
  metricsWithSegments: (board: string) =>
    `metrics do not go with segments yet: board "${board}" declares segments; drop one of them`,
  historyTooLarge: (board: string, what: string, rows: number, most: number) =>
    `each metric keeps its own ${what}: board "${board}" would keep ${rows} rows of them (metrics x keep x top over its windows), past the ${most} a board of one metric may keep; keep fewer or smaller`,
  metricsWithActors: (board: string) =>
    `metrics do not go with actors yet: board "${board}" declares actors; drop one of them`,
  metricOnView: (board: string, view: string) =>
    `view "${view}" of board "${board}" ranks by its own formula: ?metric= reads a window`,
  mixedBatch: (board: string) =>
    `a batch on board "${board}" names one metric for all its entries (send one batch per metric)`,
};

/** The board PUT's `metrics` field: its schema and validation. */
export const MetricsProperty = () =>
  applyDecorators(
    Matches(METRIC_PATTERN, { each: true, message: `each metric must be ${METRIC_RULE}` }),
    ArrayUnique({ message: 'metrics must be distinct' }),
    ArrayMaxSize(METRICS_PER_BOARD.max, { message: `metrics holds at most ${METRICS_PER_BOARD.max} names` }),
    ArrayMinSize(METRICS_PER_BOARD.min, { message: `metrics holds at least ${METRICS_PER_BOARD.min} names` }),
    IsArray({ message: 'metrics must be an array of names like ["up", "down"]' }),
    IsOptionalNotNull(),
    ApiPropertyOptional({
      type: [String],
      minItems: METRICS_PER_BOARD.min,
      maxItems: METRICS_PER_BOARD.max,
      example: ['up', 'down'],
      description: `Several counters per item per window (${METRIC_RULE}): increments, batch entries and likes name one with "metric" (default the first), reads rank by one with ?metric= (default the first) and answer them all in each row's "metrics". Sum boards only, not with segments or actors. Omitted: the current setting (one counter for a new board). Changing it needs ?reset=true and drops the data`,
    }),
  );

/** The board view's `metrics` field (present when declared). */
export const MetricsViewProperty = () =>
  ApiPropertyOptional({ type: [String], description: 'The counters of each item per window; absent: one' });

/** A write's or read's optional `metric`: the compiled check's rule and its OpenAPI schema. */
const METRIC_NAME_CHARS = { min: 1, max: 32 };
export const METRIC_FIELD: FieldRule = optional({ kind: 'string', pattern: METRIC_PATTERN, length: METRIC_NAME_CHARS });
export const MetricProperty = (what: string) =>
  applyDecorators(
    Matches(METRIC_PATTERN, { message: `metric must be ${METRIC_RULE}` }),
    IsOptionalNotNull(),
    ApiPropertyOptional({
      description: `${what} (a board declaring "metrics"; default its first; a name it does not declare: 400 UNKNOWN_METRIC)`,
      example: 'down',
      minLength: METRIC_NAME_CHARS.min,
      maxLength: METRIC_NAME_CHARS.max,
    }),
  );

/** A wilson or controversial view's `positive` / `negative`: a metric of the board (board PUT, board view). */
export const ViewMetricProperty = (role: 'positive' | 'negative') =>
  applyDecorators(
    Matches(METRIC_PATTERN, { message: `$property must be a metric name (${METRIC_RULE})` }),
    IsOptionalNotNull(),
    ApiPropertyOptional({
      description: `wilson and controversial only, required: the metric counted as ${role} (one of the board's metrics; positive and negative differ)`,
      example: role === 'positive' ? 'up' : 'down',
    }),
  );

/** A row's counts by metric name: an object of numbers, described for the read that answers it. */
const metricCountsProperty = (description: string) =>
  ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'number' },
    example: { up: 12, down: 3 },
    description,
  });

/** A row's `metrics` (on a board with metrics): every metric's count in the window. */
export const MetricCountsProperty = () =>
  metricCountsProperty(
    "On a board with metrics: a window read's rows each metric's count of the item in the window (0 when none); a wilson or controversial view's rows the counts of its positive and negative metrics",
  );

export const HistoryMetricCountsProperty = () =>
  metricCountsProperty(
    "On a board with metrics: each metric's count of the item at the snapshot's boundary, as that metric's own snapshot at the same boundary kept it (the ranked metric's is `score`); 0 when that snapshot holds fewer rows than its `top` and not the item; a metric is absent when its snapshot is full without the item (below its kept rows) or it has none at that boundary",
  );

export const ArchiveMetricCountsProperty = () =>
  metricCountsProperty(
    "On a board with metrics: each metric's count of the item in the closed period, as that metric's own archive of the period kept it (the ranked metric's is `score`); 0 when that archive holds fewer rows than its `top` and not the item; a metric is absent when its archive is full without the item or there is none. Absent on the rows of an archive kept before archives kept their records",
  );

const declared = (config: Readonly<MetricsConfig>) => (config.metrics?.length ?? 0) > 0;

/**
 * `metrics`: a metric other than the first keeps its windows as a parallel set of the board's window
 * keys, `<window>~@<metric>:...` in the same hash tag, so that each metric is exactly a board of its own
 * (board.ts, PreparedBoard.metric); metrics_lib.lua stores the setting and drops those keys with
 * their window.
 */
export const metricsOption: BoardOption<MetricsConfig> = {
  ...fieldSetting<MetricsConfig>('metrics', { put: MetricsProperty, view: MetricsViewProperty }),
  luaModules: luaModulesIn(__dirname, 'metric_formulas.lua', 'metrics_lib.lua', 'metric_views_lib.lua'),
  fromStored: (fields) => (fields.metrics ? { metrics: fields.metrics.split(',') } : {}),
  fromReply: (fields) => {
    if (fields.metrics === undefined || fields.metrics === '') return {};
    if (typeof fields.metrics !== 'string') throw new Error(`metrics ${JSON.stringify(fields.metrics)} is not a list`);
    return { metrics: fields.metrics.split(',') };
  },
  view: (config) => (declared(config) ? { metrics: [...config.metrics!] } : {}),
  check: (board: BoardSettings) => {
    const metrics = board.options.metrics as string[] | undefined;
    if (!metrics?.length) return;
    if (board.aggregate !== 'sum') throw new InvalidInputError(METRICS_MESSAGES.metricsNeedSum(board.name));
    if (board.holds?.segments) throw new InvalidInputError(METRICS_MESSAGES.metricsWithSegments(board.name));
    if (board.holds?.actors) throw new InvalidInputError(METRICS_MESSAGES.metricsWithActors(board.name));
    if (board.histories) checkHistoryRows(board.name, metrics.length, board.histories);
  },
};

/**
 * The most history rows a board may keep, snapshots and archives apart: a board of one metric with its
 * `windows` (the most a board may have) each at its largest `keep` x `top`. `archiveRecords`: the fields
 * of the archives' records a board of several metrics keeps beside its archives (archive_lib: item ->
 * score, one per archive row: ~68 bytes each, the row's text ~26), bounded as its archive rows are.
 */
export const historyRowsMost = (windows: number) => ({
  snapshots: windows * SNAPSHOT_KEEP.max * SNAPSHOT_TOP_ITEMS.max,
  archives: windows * ARCHIVE_KEEP.max * ARCHIVE_TOP_ITEMS.max,
  archiveRecords: windows * ARCHIVE_KEEP.max * ARCHIVE_TOP_ITEMS.max,
});

/**
 * Each metric keeps its own history: n metrics keep n times the windows' rows, refused past what a board
 * of one metric may keep (historyRowsMost), so what Redis holds stays within it.
 */
function checkHistoryRows(board: string, metrics: number, histories: NonNullable<BoardSettings['histories']>): void {
  const mostRows = historyRowsMost(histories.mostWindows);
  // A board of several metrics keeps a record of each archive row beside its archives (archive_lib).
  for (const [what, calendar] of [
    ['snapshots', false],
    ['archives', true],
    ['archiveRecords', true],
  ] as const) {
    const rows =
      metrics * histories.windows.filter((h) => h.calendar === calendar).reduce((sum, h) => sum + h.keep * h.top, 0);
    const most = mostRows[what];
    if (rows > most) throw new InvalidInputError(METRICS_MESSAGES.historyTooLarge(board, what, rows, most));
  }
}

/**
 * The name a metric's window goes by in its keys ("<tag>:<name>:slots|top"): the board's own window for
 * its first metric, "<window>~@<metric>" for another (as PreparedBoard.metric and metrics_lib.lua name it).
 */
export function metricWindowKeyName(window: string, metric: string, metrics: readonly string[]): string {
  return metric === metrics[0] ? window : `${window}~@${metric}`;
}

/** The metric a write or read names, checked against the board's (undefined: the first, or none). */
export function metricOf(
  board: string,
  config: Readonly<MetricsConfig>,
  metric: string | undefined,
): string | undefined {
  if (metric === undefined) return undefined;
  const known = config.metrics ?? [];
  if (!known.includes(metric)) throw new UnknownMetricError(METRICS_MESSAGES.unknownMetric(board, metric, known));
  return metric === known[0] ? undefined : metric;
}

/** 400 UNKNOWN_METRIC: a write or read naming a metric its board does not declare. */
export class UnknownMetricError extends DomainError {
  constructor(message: string) {
    super('UNKNOWN_METRIC', message);
  }
}

/** The one metric of a batch's entries (undefined: the first); entries naming two: 400. */
export function batchMetric(
  command: { board: string; entries: ReadonlyArray<{ metric?: string }> },
  config: Readonly<MetricsConfig>,
): string | undefined {
  const metrics = new Set(command.entries.map((entry) => metricOf(command.board, config, entry.metric)));
  if (metrics.size > 1) throw new InvalidInputError(METRICS_MESSAGES.mixedBatch(command.board));
  return [...metrics][0];
}

/** A board as the metrics option sees it: its config and its board of each metric (PreparedBoard). */
interface MetricBoards<B> {
  readonly config: Readonly<MetricsConfig> & { readonly name: string };
  metric(name: string | undefined): B;
}

/** The board as a write's metric keeps it: a 400 for a metric the board does not declare. */
export function metricBoardOf<B>(
  command: { kind: string; board: string; metric?: string; entries?: ReadonlyArray<{ metric?: string }> },
  board: MetricBoards<B> & B,
): B {
  if (command.kind === 'increment') return board.metric(metricOf(command.board, board.config, command.metric));
  if (command.kind !== 'batch' || !command.entries) return board;
  return board.metric(batchMetric({ board: command.board, entries: command.entries }, board.config));
}
