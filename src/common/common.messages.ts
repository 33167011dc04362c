/** Messages of the shared guards, written once. */
export const COMMON_MESSAGES = {
  adminDisabled: () => 'Admin routes are disabled: ADMIN_TOKEN is not configured',
  adminTokenMissing: () => 'Authorization: Bearer <ADMIN_TOKEN> is required',
  adminTokenInvalid: () => 'The admin token is wrong',
  rateLimited: (perSecond: number, burst: number, retryAfterSec: number) =>
    `Rate limit exceeded: ${perSecond} writes per second (burst ${burst}) per client; retry after ${retryAfterSec} s`,
  apiKeyInvalid: () => 'X-Api-Key is not a configured API key',
  notReady: (down: string[]) => `Not ready: ${down.join(', ')}`,
};
