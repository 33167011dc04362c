/**
 * One redis-server and one three-master Redis Cluster per Jest worker, shared by the test files that
 * worker runs one after another, each file under its own key prefix: starting servers for every file
 * was a large part of the integration and e2e time. The integration, e2e and client projects start them
 * in their globalSetup (test/support/worker-servers-setup.ts) and stop them in their globalTeardown; a
 * worker finds its own by JEST_WORKER_ID.
 */
export const WORKER_SERVERS_ENV = 'TRENDBOARD_TEST_WORKER_SERVERS';

/** A worker's servers: a single node's URL and a Cluster's `host:port,…` (empty when not started). */
export interface WorkerServer {
  url: string;
  nodes: string;
}

/** This Jest worker's servers, if the run started them. */
export function workerServers(): WorkerServer | undefined {
  const all = process.env[WORKER_SERVERS_ENV];
  const worker = Number(process.env.JEST_WORKER_ID);
  if (!all || !Number.isInteger(worker) || worker < 1) return undefined;
  return (JSON.parse(all) as WorkerServer[])[worker - 1];
}
