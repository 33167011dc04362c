import { Global, Module } from '@nestjs/common';
import { RedisFunctions } from './redis-functions';
import { RedisService } from './redis.service';

@Global()
@Module({ providers: [RedisService, RedisFunctions], exports: [RedisService, RedisFunctions] })
export class RedisModule {}
