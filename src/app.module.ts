import { DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AccessModule } from './access/access.module';
import { CommonModule, CommonModuleOptions } from './common/common.module';
import { CountersModule } from './counters/counters.module';
import { EdgeModule } from './edge/edge.module';
import { GovernanceModule } from './governance/governance.module';
import { DashboardModule } from './dashboard/dashboard.module';
import { HealthModule } from './health/health.module';
import { IngestModule } from './ingest/ingest.module';
import { LiveModule } from './live/live.module';
import { RankingModule } from './ranking/ranking.module';
import { RedisModule } from './redis/redis.module';
import { StatsModule } from './stats/stats.module';

@Module({})
export class AppModule {
  static forRoot(options: CommonModuleOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CommonModule.forRoot(options),
        ScheduleModule.forRoot(),
        EdgeModule,
        RedisModule,
        AccessModule.forRoot({ ...process.env, ...options.env }),
        HealthModule,
        GovernanceModule,
        RankingModule,
        LiveModule.forRoot({ ...process.env, ...options.env }),
        DashboardModule,
        CountersModule,
        StatsModule,
        IngestModule.forRoot({ ...process.env, ...options.env }),
      ],
    };
  }
}
