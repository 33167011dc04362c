import { DynamicModule, Global, Module } from '@nestjs/common';
import { AccessController } from './access.controller';
import { AccessGate } from './access-gate';
import { AccessGuard } from './access.guard';
import { ApiKeysRefresher } from './api-keys.refresher';
import { ApiKeysService } from './api-keys.service';
import { ApiKeyStore } from './api-keys.store';
import { AccessSettings } from './access.settings';
import { moduleWithSettings } from '../common/settings';

/** API keys (configured and stored), the global access guard, and the /admin/keys routes. */
@Global()
@Module({
  controllers: [AccessController],
  providers: [ApiKeyStore, ApiKeysService, ApiKeysRefresher, AccessGate, AccessGuard],
  exports: [ApiKeysService, AccessGate, AccessGuard],
})
export class AccessModule {
  /** Validates the access settings at once: a bad value throws here, before anything connects. */
  static forRoot(env: Record<string, unknown>): DynamicModule {
    return moduleWithSettings(AccessModule, AccessSettings, env);
  }
}
