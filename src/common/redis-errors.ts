/** What a command answers when Redis gave no reply in time (the command may still have run). */
export const TIMEOUT_MESSAGE = 'Command timed out';

/**
 * True for errors that mean "Redis is unreachable or too slow right now" (answered as 503), not a bug:
 * a Cluster whose slot map is changing under the client (redirections past ioredis' maxRedirections) too.
 */
const UNAVAILABLE_MESSAGE =
  /Connection is closed|Stream isn't writeable|Command timed out|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND|LOADING|BUSY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|Failed to refresh slots cache|None of startup nodes is available|Too many Cluster redirections/;
const UNAVAILABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError', 'RedisUnavailableError']);

/** True for a command that got no answer within REDIS_COMMAND_TIMEOUT_MS (it may still have run). */
export function isRedisTimeoutError(error: unknown): boolean {
  return error instanceof Error && error.message === TIMEOUT_MESSAGE;
}

/** True for Redis refusing a write because it reached maxmemory (noeviction): nothing of the script was applied. */
export function isRedisFullError(error: unknown): boolean {
  return error instanceof Error && /^OOM /.test(error.message);
}

export function isRedisUnavailableError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return UNAVAILABLE_NAMES.has(error.name) || UNAVAILABLE_MESSAGE.test(error.message);
}

/**
 * True when a Cluster node refused a key it does not serve (a slot moved since the client's slot map was
 * read): the call ran nothing, and the same work sent key by key is routed right.
 */
export function isRedisWrongNodeError(error: unknown): boolean {
  return error instanceof Error && /non local key|^MOVED |^ASK |^CROSSSLOT /.test(error.message);
}

/** What went wrong with a Redis command, as /metrics counts it (`trendboard_redis_command_errors_total`). */
export type RedisErrorKind = 'timeout' | 'connection' | 'oom' | 'refusal' | 'script' | 'other';

export function redisErrorKind(error: unknown): RedisErrorKind {
  if (isRedisTimeoutError(error)) return 'timeout';
  if (isRedisUnavailableError(error)) return 'connection';
  if (isRedisFullError(error)) return 'oom';
  const message = error instanceof Error ? error.message : '';
  // TB_*: a script's own refusal (quota, cap...), an expected answer, not a fault.
  if (message.startsWith('TB_')) return 'refusal';
  // A Lua runtime error or a command Redis refused inside a script: a bug or a key of the wrong type.
  if (/user_script|^ERR |^WRONGTYPE |^NOSCRIPT /.test(message)) return 'script';
  return 'other';
}

/** ioredis' and Node's words for a lost connection, as an operator reads them. */
const PLAIN_REASONS: Array<[RegExp, (match: RegExpMatchArray) => string]> = [
  [/ECONNREFUSED (\S+)/, (m) => `nothing accepts connections at ${m[1]}`],
  [/ENOTFOUND (\S+)/, (m) => `the host name ${m[1]} does not resolve`],
  [/ETIMEDOUT|connect timeout|Command timed out/i, () => 'it stopped answering in time'],
  [/EHOSTUNREACH (\S+)/, (m) => `the host ${m[1]} is unreachable`],
  [/ECONNRESET|EPIPE|Connection is closed|Stream isn't writeable/, () => 'the connection was closed'],
  [/LOADING/, () => 'it is loading its data set'],
  [/None of startup nodes is available|Failed to refresh slots cache|CLUSTERDOWN/, () => 'no Cluster node answers'],
];

/** A failed Redis call in a log line: "Redis does not answer" for a connection away (not ioredis' words), else the error. */
export function redisFailureInWords(error: unknown): string {
  return isRedisUnavailableError(error) ? 'Redis does not answer' : String(error);
}

/** Why Redis is unavailable, in plain words (an unknown reason is quoted as it is). */
export function plainRedisReason(message: string): string {
  for (const [pattern, say] of PLAIN_REASONS) {
    const match = message.match(pattern);
    if (match) return say(match);
  }
  return message;
}
