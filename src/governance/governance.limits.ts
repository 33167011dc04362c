import { Bounds } from '../common/limits';

/** Seconds the in-process request figures cover, and so the span a local-metrics read may ask for. */
export const LOCAL_SPAN_SEC = 60;
export const LOCAL_READ_SPAN_SEC: Bounds = { min: 1, max: LOCAL_SPAN_SEC };
export const DEFAULT_LOCAL_READ_SPAN_SEC = 10;
