import { Logger } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { AppConfig } from './common/config';
import { createApp } from './bootstrap';
import { logBootFailure } from './common/logging';
import { gracefulShutdown } from './shutdown';

/** Settings to iterate on locally: a `.env` file in the working directory, under the real environment's. */
const ENV_FILE = '.env';

async function main(): Promise<void> {
  const envFile = existsSync(ENV_FILE);
  if (envFile) process.loadEnvFile(ENV_FILE);
  const app = await createApp();
  if (envFile) new Logger('Config').log(`settings read from ${ENV_FILE} (the environment's own win)`);
  const config = app.get(AppConfig);
  const shutdown = gracefulShutdown(app, {
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
    logger: new Logger('Shutdown'),
    exit: (code) => process.exit(code),
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => void shutdown(signal));
  await app.listen(config.PORT, config.HOST);
}

main().catch((error: unknown) => {
  logBootFailure(error);
  process.exit(1);
});
