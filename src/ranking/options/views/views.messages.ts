/** What the views option answers when a board's views do not hold, written once. */
export const VIEWS_MESSAGES = {
  viewNeedsMetrics: (field: string, mode: string) =>
    `${field}: a ${mode} view ranks by two metrics of the board, and the board declares none: declare "metrics": ["up", "down"] and name them as positive and negative`,
  viewMetric: (field: string, role: string, metric: unknown, metrics: readonly string[]) =>
    `${field}: ${role} must be one of the board's metrics (${metrics.join(', ')}), got ${JSON.stringify(metric)}`,
  viewMetricsSame: (field: string, metric: string) =>
    `${field}: positive and negative must be two different metrics (both are "${metric}")`,
  keptViewsBroken: (problem: string) =>
    `the stored views no longer fit the windows (${problem}); send views with the new windows`,
  viewCount: (max: number) => `views must hold at most ${max} views`,
  viewNameTaken: (field: string, name: string) => `${field}.name "${name}" is already a window or view name`,
  viewField: (field: string, problem: string) => `${field}.${problem}`,
} as const;
