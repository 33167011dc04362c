import { Bounds } from '../common/limits';

/** Rows a stream watches (`limit` of GET /boards/:board/stream). */
export const STREAM_ROWS: Bounds = { min: 1, max: 100 };
export const DEFAULT_STREAM_ROWS = 10;

/** A comment line every this long keeps idle streams open through proxies that drop silent connections. */
export const STREAM_HEARTBEAT_MS = 15_000;

/** What a browser waits before reconnecting a dropped stream (the SSE `retry` field). */
export const STREAM_RETRY_MS = 1000;

/** Stream clients one instance serves at once; one more is answered 503 STREAM_CAPACITY. */
export const MAX_STREAM_CLIENTS = 10_000;
