import { Global, Module } from '@nestjs/common';

/** The app's own settings (a stand-in for @nestjs/config): where its Redis is. */
export class AppSettings {
  readonly redisUrl = process.env.EXAMPLE_REDIS_URL ?? 'redis://127.0.0.1:6379';
}

@Global()
@Module({ providers: [AppSettings], exports: [AppSettings] })
export class SettingsModule {}
