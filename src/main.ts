import { INestApplication, Logger } from '@nestjs/common';
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppConfig } from './common/config';
import { createApp } from './bootstrap';
import { logBootFailure } from './edge/logging';
import { TurnBatchedDestination } from './edge/log-destination';
import { RedisService } from './redis/redis.service';
import { gracefulShutdown } from './shutdown';

/** Settings to iterate on locally: a `.env` file in the working directory, under the real environment's. */
const ENV_FILE = '.env';

async function main(): Promise<void> {
  const envFile = existsSync(ENV_FILE);
  if (envFile) process.loadEnvFile(ENV_FILE);
  // Standard output, a turn's lines in one write (see TurnBatchedDestination).
  const app = await createApp({ logDestination: new TurnBatchedDestination(1) });
  if (envFile) new Logger('Config').log(`settings read from ${ENV_FILE} (the environment's own win)`);
  const config = app.get(AppConfig);
  const shutdown = gracefulShutdown(app, {
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    logger: new Logger('Shutdown'),
    exit: (code) => process.exit(code),
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void shutdown(signal));
  await listen(app, config);
  announceReady(app, config);
}

/**
 * "ready" once the port is bound and Redis answers, naming the port really bound (PORT=0 picks one).
 * A Redis that is not there yet is said instead, and "ready" follows when it answers.
 */
function announceReady(app: INestApplication, config: AppConfig): void {
  const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
  const where = `http://${config.HOST}:${port}`;
  const logger = new Logger('Main');
  const ready = () => logger.log(`trendboard ready on ${where} (dashboard at /dashboard, API at /docs)`);
  const redis = app.get(RedisService);
  if (redis.client.status === 'ready') return ready();
  logger.warn(
    `listening on ${where}, not ready: Redis does not answer yet (REDIS_URL or REDIS_CLUSTER_NODES); /health/ready answers 503 until it does`,
  );
  redis.onceReady(ready);
}

/** Listens on PORT/HOST; a port taken or forbidden stops the boot with a line naming both settings. */
async function listen(app: INestApplication, config: AppConfig): Promise<void> {
  try {
    await app.listen(config.PORT, config.HOST);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `PORT=${config.PORT} on HOST=${config.HOST}`;
    if (code === 'EADDRINUSE')
      throw new Error(`${where} is already in use by another process: stop it, or set PORT (or HOST) to another`, {
        cause: error,
      });
    if (code === 'EACCES')
      throw new Error(`${where} needs privileges this process lacks: set PORT above 1023`, { cause: error });
    if (code === 'EADDRNOTAVAIL')
      throw new Error(`HOST=${config.HOST} is no address of this machine: set HOST`, { cause: error });
    throw error;
  }
}

main().catch((error: unknown) => {
  logBootFailure(error);
  process.exit(1);
});
