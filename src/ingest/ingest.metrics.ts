import { Injectable, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Counter, Gauge } from 'prom-client';
import { registerOnAppRegistry } from '../governance/app-registry';

/**
 * Per-source figures of this instance on /metrics: events applied and messages dead-lettered by it
 * (counters: sum them over instances), and the lag last measured (only the instance consuming a
 * source measures it; the others drop the series).
 */
@Injectable()
export class IngestMetrics implements OnModuleInit {
  private readonly applied = new Counter({
    name: 'trendboard_ingest_applied_total',
    help: 'Events applied from a stream source by this instance',
    labelNames: ['source'],
    registers: [],
  });
  private readonly deadLettered = new Counter({
    name: 'trendboard_ingest_dead_lettered_total',
    help: 'Messages of a stream source written to its dead letters by this instance',
    labelNames: ['source'],
    registers: [],
  });
  private readonly lag = new Gauge({
    name: 'trendboard_ingest_lag_messages',
    help: 'Messages of a stream source not yet applied, as last measured by the instance consuming it',
    labelNames: ['source'],
    registers: [],
  });

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
