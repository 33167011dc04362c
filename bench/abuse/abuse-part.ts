/**
 * One part of `npm run abuse`: replays one family of hostile-client floods (issue #22's table) against
 * a private redis-server and the built service (dist/main.js) it starts itself, and answers a row per
 * attack. Every flood is bounded in count and time (at most 20 s) and sends traffic to loopback only.
 */
export interface AbuseRow {
  /** The attack, as in docs/security.md's table (e.g. "1: 10 000 SSE streams from one client"). */
  attack: string;
  /** What was measured, with units (e.g. "streams accepted 100, refused 9 900; /health/live p99 3 ms"). */
  measured: string;
  /** Whether the service held (the limit applied, no crash, unrelated reads' p99 under 50 ms). */
  held: boolean;
}

export type AbusePart = () => Promise<AbuseRow[]>;
