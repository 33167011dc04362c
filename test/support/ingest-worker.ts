/**
 * A trendboard instance in a process of its own, for the ingest fault tests: it consumes the declared
 * sources until killed (SIGKILL: a crash) or stopped (SIGTERM: it leaves cleanly). Its environment
 * comes from the test (REDIS_URL, KEY_PREFIX, INGEST_*).
 */
import { createApp } from '../../src/bootstrap';

async function main(): Promise<void> {
  const app = await createApp({ logDestination: { write: () => undefined } });
  // Listening: the fault test declares its boards and source through an instance's routes.
  await app.listen(0, '127.0.0.1');
  process.send?.({ url: await app.getUrl() });
  process.once('SIGTERM', () => {
    void app.close().then(() => process.exit(0));
  });
}

void main().catch((error: unknown) => {
  process.stderr.write(`worker failed: ${String(error)}\n`);
  process.exit(1);
});
