import { Logger } from '@nestjs/common';
import { AppConfig } from './common/config';
import { createApp } from './bootstrap';
import { logBootFailure } from './common/logging';
import { gracefulShutdown } from './shutdown';

async function main(): Promise<void> {
  const app = await createApp();
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
