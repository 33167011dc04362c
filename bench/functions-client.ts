/**
 * The benches' way to the service's Redis Functions: the connection service and RedisFunctions built
 * as the service builds them (settings classes from the validated config, the libraries defined and
 * loaded on module init), over the bench's own plain client to a private redis-server. Setup calls go
 * through `functions.call` (typed, decoded, reloaded when missing); the measured calls stay raw FCALLs
 * on `client`'s pipelines, since what is measured is inside Redis.
 */
import Redis from 'ioredis';
import { SystemClock } from '../src/common/clock';
import { validateConfig } from '../src/common/config';
import { RankingSettings } from '../src/ranking/core/ranking.settings';
import type { FunctionLibrary } from '../src/redis/function-library';
import { RedisFunctions } from '../src/redis/redis-functions';
import { RedisService } from '../src/redis/redis.service';
import { RedisSettings } from '../src/redis/redis.settings';

export interface BenchFunctions {
  client: Redis;
  functions: RedisFunctions;
  ranking: RankingSettings;
  /** KEY_PREFIX as the service would read it. */
  prefix: string;
}

/** RedisFunctions over `client` (the server at `url`), with `libraries` loaded; `env` over the config's defaults. */
export async function benchFunctions(
  url: string,
  client: Redis,
  libraries: readonly FunctionLibrary[],
  env: Record<string, string> = {},
): Promise<BenchFunctions> {
  const config = validateConfig({ ...env, REDIS_URL: url });
  const settings = RedisSettings.from(config);
  const service = new RedisService(settings, new SystemClock(), client);
  const functions = new RedisFunctions(service);
  functions.define(libraries);
  await functions.onModuleInit();
  if (!functions.state.loaded) throw new Error(`function libraries not loaded: ${functions.state.reason}`);
  return { client, functions, ranking: RankingSettings.from(config), prefix: settings.keyPrefix };
}
