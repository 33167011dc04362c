import { Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Counter, Gauge } from 'prom-client';
import { registerOnAppRegistry } from '../../governance/app-registry';

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
