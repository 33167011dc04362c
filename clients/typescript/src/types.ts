import type { components, paths } from './generated/api.js';

/**
 * Request and answer types of each route, read from the generated `paths`: a route whose shape changes
 * in the service changes here at the next `npm run client:generate`, and the client stops compiling
 * where it no longer fits.
 */
export type Path = keyof paths;
export type Method = 'get' | 'put' | 'post' | 'delete';

type Operation<P extends Path, M extends Method> = NonNullable<paths[P][M]>;

export type QueryOf<P extends Path, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type BodyOf<P extends Path, M extends Method> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/** The JSON of the route's success answer (200 or 201); void for a 204. */
export type AnswerOf<P extends Path, M extends Method> =
  Operation<P, M> extends { responses: infer R }
    ? R extends { 200: { content: { 'application/json': infer A } } }
      ? A
      : R extends { 201: { content: { 'application/json': infer A } } }
        ? A
        : void
    : never;

export type Schemas = components['schemas'];
/** One row of a listing: top, around, history, live events. */
export type ListedItem = Schemas['ListedItemDto'];
