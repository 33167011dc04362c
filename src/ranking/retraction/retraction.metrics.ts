import { Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Counter, Gauge } from 'prom-client';
import { PrometheusService } from '../../governance/prometheus.service';

/** Retractions on /metrics: those this instance is running, and what its steps took out. */
@Injectable()
export class RetractionMetrics implements OnModuleInit {
  private readonly running = new Gauge({
    name: 'trendboard_retractions_running',
    help: 'Retractions this instance is running now',
    registers: [],
  });
  private readonly contributions = new Counter({
    name: 'trendboard_retraction_contributions_total',
    help: "Contributions (one actor's events in one item, slot and window) taken out by this instance's retraction steps",
    registers: [],
  });
  private readonly finished = new Counter({
    name: 'trendboard_retractions_finished_total',
    help: 'Retractions this instance saw to their end',
    registers: [],
  });

  /** Without `modules` (a graph built by hand: tests, benchmarks) the figures are kept but not exported. */
  constructor(@Optional() private readonly modules?: ModuleRef) {}

  /** Registered on the app's registry when there is one (looked up: governance exports it to no one). */
  onModuleInit(): void {
    if (!this.modules) return;
    let prometheus: PrometheusService;
    try {
      prometheus = this.modules.get(PrometheusService, { strict: false });
    } catch {
      return; // an app without /metrics (the library without governance)
    }
    for (const metric of [this.running, this.contributions, this.finished]) prometheus.registry.registerMetric(metric);
  }

  runningNow(count: number): void {
    this.running.set(count);
  }

  took(contributions: number): void {
    if (contributions > 0) this.contributions.inc(contributions);
  }

  finishedOne(): void {
    this.finished.inc();
  }
}
