import { Injectable, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { featureCounter, featureGauge, registerOnAppRegistry } from '../governance/app-registry';

/**
 * Per-source figures of this instance on /metrics: events applied and messages dead-lettered by it
 * (counters: sum them over instances), and the lag last measured (only the instance consuming a
 * source measures it; the others drop the series).
 */
@Injectable()
export class IngestMetrics implements OnModuleInit {
  private readonly applied = featureCounter(
    'trendboard_ingest_applied_total',
    'Events applied from a stream source by this instance',
    ['source'],
  );
  private readonly deadLettered = featureCounter(
    'trendboard_ingest_dead_lettered_total',
    'Messages of a stream source written to its dead letters by this instance',
    ['source'],
  );
  private readonly lag = featureGauge(
    'trendboard_ingest_lag_messages',
    'Messages of a stream source not yet applied, as last measured by the instance consuming it',
    ['source'],
  );

  constructor(private readonly modules: ModuleRef) {}

  onModuleInit(): void {
    registerOnAppRegistry(this.modules, [this.applied, this.deadLettered, this.lag]);
  }

  observe(source: string, figures: { applied?: number; deadLettered?: number; lag?: number }): void {
    if (figures.applied) this.applied.inc({ source }, figures.applied);
    if (figures.deadLettered) this.deadLettered.inc({ source }, figures.deadLettered);
    if (figures.lag !== undefined) this.lag.set({ source }, figures.lag);
  }

  forget(source: string): void {
    this.lag.remove({ source });
  }
}
