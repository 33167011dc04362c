export { TrendboardClient } from './client.js';
export { Boards } from './boards.js';
export { Admin, Counters, Health, Stats } from './services.js';
export { TrendboardError, type ClientErrorCode } from './errors.js';
export { ERROR_TABLE, type Applied, type ErrorCode } from './generated/errors.js';
export type { components, paths } from './generated/api.js';
export type { CallOptions, ClientOptions } from './transport.js';
export type { AnswerOf, BodyOf, ListedItem, QueryOf, Schemas } from './types.js';
export type { LiveListing, TopEvent, WatchOptions } from './watch.js';
