/** A count as a message says it: a share of a stored answer (a short-kept one's) in 3 significant digits. */
function shareText(count: number): string {
  return Number.isInteger(count) ? String(count) : String(Number(count.toPrecision(3)));
}

/** Messages of the shared guards, written once. */
export const COMMON_MESSAGES = {
  adminDisabled: () => 'Admin routes are disabled: neither ADMIN_TOKEN nor a key with the admin scope is configured',
  adminTokenMissing: () => 'Authorization: Bearer <ADMIN_TOKEN> (or an API key with the admin scope) is required',
  adminTokenInvalid: () => 'The admin token is wrong (and it is no API key either)',
  rateLimited: (kind: 'read' | 'write', perSecond: number, burst: number, retryAfterSec: number) =>
    `Rate limit exceeded: ${perSecond} ${kind}s per second (burst ${burst}) per client; retry after ${retryAfterSec} s`,
  redisUnavailable: () => 'Redis is unreachable; try again shortly',
  redisBusy: (pending: number) =>
    `Too much Redis work in flight on this instance (${pending} commands unanswered); retry after 1 s`,
  quotaExceeded: (kind: string, wanted: number, perInterval: number, intervalSec: number, retryAfterSec: number) =>
    wanted > perInterval
      ? `Quota exceeded: a client may create ${perInterval} ${kind} per ${intervalSec} s and this write would create ${shareText(wanted)}; send fewer at once`
      : `Quota exceeded: a client may create ${perInterval} ${kind} per ${intervalSec} s and this write would create ${shareText(wanted)}; retry after ${retryAfterSec} s (existing entries keep counting)`,
  capacityReached: (what: string, held: number, most: number, setting: string) =>
    `The service holds its most ${what} (${held} of ${most}, ${setting}): new ones are refused until old ones age out; existing ones keep counting`,
  offsetWithCursor: 'cursor: send either offset or cursor, not both',
  notReady: (down: string[]) => `Not ready: ${down.join(', ')}`,
  requestTimeout: (headersMs: number, requestMs: number) =>
    `The request did not arrive in time: headers within ${headersMs} ms, the whole request within ${requestMs} ms`,
  headersTooLarge: () => 'The request headers are too large',
  malformedRequest: () => 'Malformed HTTP request',
  metricsTokenMissing: () => 'Authorization: Bearer <METRICS_TOKEN> is required',
  metricsTokenInvalid: () => 'The metrics token is wrong',
  methodNotAllowed: (method: string, allowed: string[]) =>
    `${method} is not allowed on this path; it answers ${allowed.join(', ')} (see the Allow header)`,
};
