import { Global, Module } from '@nestjs/common';
import { RedisFunctions } from './redis-functions';
import { AppConfig } from '../common/config';
import { RedisService } from './redis.service';
import { RedisSettings } from './redis.settings';

@Global()
@Module({
  providers: [
    { provide: RedisSettings, inject: [AppConfig], useFactory: (config: AppConfig) => RedisSettings.from(config) },
    RedisService,
    RedisFunctions,
  ],
  exports: [RedisSettings, RedisService, RedisFunctions],
})
export class RedisModule {}
