import { DynamicModule, FactoryProvider, Global, Module, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { AccessGate } from '../access/access-gate';
import { validateAccessSettings, AccessSettings } from '../access/access.settings';
import { ApiKeysRefresher } from '../access/api-keys.refresher';
import { ApiKeysService } from '../access/api-keys.service';
import { ApiKeyStore } from '../access/api-keys.store';
import { Clock, SystemClock } from '../common/clock';
import { AppConfig, validateConfig } from '../common/config';
import { AnsweredRequests } from '../common/answered-requests';
import { JobRegistry } from '../common/jobs';
import { GovernanceModule } from '../governance/governance.module';
import { RateLimitGuard } from '../governance/rate-limit.guard';
import { CountersCoreModule } from '../counters/counters-core.module';
import { CountersModule } from '../counters/counters.module';
import { RankingCoreModule } from '../ranking/ranking-core.module';
import { RankingModule } from '../ranking/ranking.module';
import { RedisFunctions } from '../redis/redis-functions';
import { REDIS_CLIENT, RedisClient, RedisService } from '../redis/redis.service';
import { RedisSettings } from '../redis/redis.settings';
import { StatsCoreModule } from '../stats/stats-core.module';
import { StatsModule } from '../stats/stats.module';
import {
  dtoClassesOf,
  LibraryEdge,
  LibraryErrorFilter,
  LibraryValidationPipe,
  requireAdminGuard,
} from './library-edge';

/** What an embedding Nest app gives TrendboardModule. */
export interface TrendboardOptions {
  /** Settings, by the service's variable names (README: docs/configuration.md), over the process environment. */
  settings?: Record<string, string | undefined>;
  /** A connection the app owns (single node or Cluster); absent: one made from REDIS_URL / REDIS_CLUSTER_NODES. */
  redis?: RedisClient;
  /** The time source (tests pass a fake one). */
  clock?: Clock;
}

export interface TrendboardAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  inject?: FactoryProvider['inject'];
  useFactory: (...args: never[]) => TrendboardOptions | Promise<TrendboardOptions>;
}

const OPTIONS = Symbol('trendboard options');
type ModuleImports = NonNullable<ModuleMetadata['imports']>;

/**
 * Config, clock, Redis and the job registry for the features, from the options: what CommonModule and
 * RedisModule give the standalone service, without its HTTP edge (no guards, filters or request log).
 */
@Global()
@Module({})
class TrendboardFoundationModule {
  /** `imports`: what the options' factory injects from (forRootAsync). */
  static register(options: Provider, imports: ModuleImports): DynamicModule {
    return {
      module: TrendboardFoundationModule,
      imports,
      providers: [
        options,
        {
          provide: AppConfig,
          inject: [OPTIONS],
          useFactory: (o: TrendboardOptions) => validateConfig({ ...process.env, ...o.settings }),
        },
        { provide: Clock, inject: [OPTIONS], useFactory: (o: TrendboardOptions) => o.clock ?? new SystemClock() },
        { provide: REDIS_CLIENT, inject: [OPTIONS], useFactory: (o: TrendboardOptions) => o.redis },
        { provide: RedisSettings, inject: [AppConfig], useFactory: (config: AppConfig) => RedisSettings.from(config) },
        RedisService,
        RedisFunctions,
        JobRegistry,
        AnsweredRequests,
      ],
      exports: [OPTIONS, AppConfig, Clock, RedisSettings, RedisService, RedisFunctions, JobRegistry, AnsweredRequests],
    };
  }
}

/**
 * trendboard in process, the way @nestjs/bullmq or @nestjs/throttler are used: `forRoot(options)` or
 * `forRootAsync({ imports, inject, useFactory })`, exporting RankingService, CountersService and
 * StatsService (with the expiry and cleaning jobs running) to the app's own providers, controllers
 * and scheduled jobs. `http: true` also mounts the service's ranking, counters and stats routes with
 * the protections of its HTTP edge (routeProtections), and needs ADMIN_TOKEN (or an admin key in
 * API_KEYS) to boot; the standalone service is these modules plus its HTTP edge (AppModule).
 */
@Module({})
export class TrendboardModule {
  static forRoot(options: TrendboardOptions & { http?: boolean } = {}): DynamicModule {
    return TrendboardModule.assemble({ useFactory: () => options }, options.http ?? false);
  }

  static forRootAsync(options: TrendboardAsyncOptions & { http?: boolean }): DynamicModule {
    return TrendboardModule.assemble(options, options.http ?? false);
  }

  private static assemble(source: TrendboardAsyncOptions, http: boolean): DynamicModule {
    // With `http` the /admin routes need a guard (ADMIN_TOKEN or an admin key): checked as the options
    // resolve, before anything built from them opens a Redis connection, so a refused boot leaves none open.
    const options: FactoryProvider = {
      provide: OPTIONS,
      inject: source.inject ?? [],
      useFactory: async (...args: never[]) => {
        const resolved = await source.useFactory(...args);
        if (http) requireAdminGuard(validateAccessSettings({ ...process.env, ...resolved.settings }));
        return resolved;
      },
    };
    // The routes need the quotas' client budgets (GovernanceModule).
    const features = http
      ? [GovernanceModule, RankingModule, CountersModule, StatsModule]
      : [RankingCoreModule, CountersCoreModule, StatsCoreModule];
    return {
      module: TrendboardModule,
      imports: [
        ScheduleModule.forRoot(),
        TrendboardFoundationModule.register(options, source.imports ?? []),
        ...features,
      ],
      providers: http ? routeProtections(features) : [],
      exports: features,
    };
  }
}

/**
 * What the standalone service's edge gives its routes, for the mounted ones: the access check (API
 * keys, ADMIN_TOKEN: assemble refuses the boot when nothing would guard the /admin routes), JSON-only and bounded
 * bodies, the validation pipe, the per-client rate limits and the error answers with a `code`, each
 * limited to the library's own routes and DTOs so the app's routes keep their rules.
 */
function routeProtections(features: Type[]): Provider[] {
  const controllers = features.flatMap((feature) => (Reflect.getMetadata('controllers', feature) ?? []) as Type[]);
  return [
    {
      provide: AccessSettings,
      inject: [OPTIONS],
      useFactory: (o: TrendboardOptions) => validateAccessSettings({ ...process.env, ...o.settings }),
    },
    ApiKeyStore,
    ApiKeysService,
    ApiKeysRefresher,
    AccessGate,
    LibraryEdge,
    { provide: APP_PIPE, useValue: new LibraryValidationPipe(dtoClassesOf(controllers)) },
    { provide: APP_FILTER, useClass: LibraryErrorFilter },
    // RATE_LIMIT_PER_SEC / READ_RATE_LIMIT_PER_SEC (off by default): only routes with a read or write
    // access rule count, so the app's own routes pass it untouched.
    { provide: APP_GUARD, useExisting: RateLimitGuard },
  ];
}
