import { Module } from '@nestjs/common';
import { TrendboardModule } from '@trendboard/nest';
import { AppSettings, SettingsModule } from './settings.module';
import { DigestJob } from './digest.job';
import { TrendingController } from './trending.controller';

/**
 * An app of its own that ranks its posts with trendboard in process: TrendboardModule.forRootAsync
 * takes its settings from the app's own settings provider, the way @nestjs/bullmq's forRootAsync does.
 */
@Module({
  imports: [
    TrendboardModule.forRootAsync({
      imports: [SettingsModule],
      inject: [AppSettings],
      useFactory: (settings: AppSettings) => ({ settings: { REDIS_URL: settings.redisUrl, KEY_PREFIX: 'example:' } }),
    }),
  ],
  controllers: [TrendingController],
  providers: [DigestJob],
})
export class AppModule {}
