import { DynamicModule, Global, Module } from '@nestjs/common';
import { AnsweredRequests } from './answered-requests';
import { Clock, SystemClock } from './clock';
import { AppConfig, validateConfig } from './config';
import { JobRegistry } from './jobs';

export interface CommonModuleOptions {
  /** Values layered over the process environment (tests use this to point at their own Redis). */
  env?: Record<string, string | undefined>;
  clock?: Clock;
}

/** Config (validated at boot), the Clock, the answered-requests hook and the job registry, shared by every feature module. */
@Global()
@Module({})
export class CommonModule {
  /** Validates the environment at once: a bad value throws here, before anything connects. */
  static forRoot(options: CommonModuleOptions = {}): DynamicModule {
    const config = validateConfig({ ...process.env, ...options.env });
    return {
      module: CommonModule,
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: Clock, useValue: options.clock ?? new SystemClock() },
        AnsweredRequests,
        JobRegistry,
      ],
      exports: [AppConfig, Clock, AnsweredRequests, JobRegistry],
    };
  }
}
