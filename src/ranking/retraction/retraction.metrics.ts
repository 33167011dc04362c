import { Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { featureCounter, featureGauge, registerOnAppRegistry } from '../../governance/app-registry';

/** Retractions on /metrics: those this instance is running, and what its steps took out. */
@Injectable()
export class RetractionMetrics implements OnModuleInit {
  private readonly running = featureGauge('trendboard_retractions_running', 'Retractions this instance is running now');
  private readonly contributions = featureCounter(
    'trendboard_retraction_contributions_total',
    "Contributions (one actor's events in one item, slot and window) taken out by this instance's retraction steps",
  );
  private readonly finished = featureCounter(
    'trendboard_retractions_finished_total',
    'Retractions this instance saw to their end',
  );

  /** Without `modules` (a graph built by hand: tests, benchmarks) the figures are kept but not exported. */
  constructor(@Optional() private readonly modules?: ModuleRef) {}

  onModuleInit(): void {
    registerOnAppRegistry(this.modules, [this.running, this.contributions, this.finished]);
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
