import type { INestApplication, LoggerService } from '@nestjs/common';
import { closerOfAll } from './edge/connections';

const beginStopping = new WeakMap<INestApplication, () => void>();

/**
 * Called once when the app is built: once stopping, every answer says `Connection: close`, so a
 * keep-alive connection whose request was in flight at the signal closes instead of holding the
 * server open until its idle timeout.
 */
export function prepareGracefulShutdown(app: INestApplication): void {
  // The server's responses say it as their status is written (closingResponses): no hook for every answer.
  beginStopping.set(app, closerOfAll(app.getHttpAdapter()));
}

export interface ShutdownOptions {
  timeoutMs: number;
  logger: LoggerService;
  exit: (code: number) => void;
}

/**
 * Graceful stop: the scheduled jobs stop (@nestjs/schedule, before the drain), the server stops accepting
 * and lets requests in flight finish, then the shutdown hooks run (buffers flush, Redis closes), then
 * exit 0. If that takes longer than `timeoutMs`, exit 1.
 * A second signal while stopping changes nothing.
 */
export function gracefulShutdown(app: INestApplication, options: ShutdownOptions): (signal: string) => Promise<void> {
  let stopping: Promise<void> | undefined;
  return (signal: string) => {
    stopping ??= (async () => {
      options.logger.log(`${signal} received: shutting down`);
      const timer = setTimeout(() => {
        options.logger.error(`shutdown took longer than ${options.timeoutMs} ms: exiting anyway`);
        options.exit(1);
      }, options.timeoutMs);
      timer.unref();
      beginStopping.get(app)?.();
      try {
        await app.close();
        clearTimeout(timer);
        options.exit(0);
      } catch (error) {
        clearTimeout(timer);
        options.logger.error(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        options.exit(1);
      }
    })();
    return stopping;
  };
}
