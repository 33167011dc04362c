/** True for errors that mean "Redis is unreachable or too slow right now" (answered as 503), not a bug. */
const UNAVAILABLE_MESSAGE =
  /Connection is closed|Stream isn't writeable|Command timed out|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|LOADING|BUSY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|Failed to refresh slots cache|None of startup nodes is available/;
const UNAVAILABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError']);

/** True for a command that got no answer within REDIS_COMMAND_TIMEOUT_MS (it may still have run). */
export function isRedisTimeoutError(error: unknown): boolean {
  return error instanceof Error && error.message === 'Command timed out';
}

/** True for Redis refusing a write because it reached maxmemory (noeviction): nothing of the script was applied. */
export function isRedisFullError(error: unknown): boolean {
  return error instanceof Error && /^OOM /.test(error.message);
}

export function isRedisUnavailableError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return UNAVAILABLE_NAMES.has(error.name) || UNAVAILABLE_MESSAGE.test(error.message);
}
