import type { ModuleRef } from '@nestjs/core';
import type { Metric } from 'prom-client';
import { PrometheusService } from './prometheus.service';

/**
 * Registers a feature's metrics on the app's /metrics registry, looked up rather than imported (the
 * governance module exports it to no one). Nothing without `modules` (a graph composed without the app)
 * or in an app without /metrics (the library without governance): the figures are then kept, not exported.
 */
export function registerOnAppRegistry(modules: ModuleRef | undefined, metrics: Metric[]): void {
  if (!modules) return;
  let prometheus: PrometheusService;
  try {
    prometheus = modules.get(PrometheusService, { strict: false });
  } catch {
    return;
  }
  for (const metric of metrics) prometheus.registry.registerMetric(metric);
}
