import type { ModuleRef } from '@nestjs/core';
import { Counter, Gauge } from 'prom-client';
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

/** A feature's counter, on no registry until registerOnAppRegistry puts it on the app's. */
export const featureCounter = <Label extends string = never>(name: string, help: string, labelNames: Label[] = []) =>
  new Counter<Label>({ name, help, labelNames, registers: [] });

/** A feature's gauge, on no registry until registerOnAppRegistry puts it on the app's. */
export const featureGauge = <Label extends string = never>(name: string, help: string, labelNames: Label[] = []) =>
  new Gauge<Label>({ name, help, labelNames, registers: [] });
