import type { CallOptions } from './transport.js';
import { type Answer, type Body, type Query, Routes } from './routes.js';
import { type TopEvent, type WatchOptions, watchTop } from './watch.js';

export class Boards extends Routes {
  /** Creates a board or changes its windows/views (201 created, 200 same or updated); admin. */
  put(
    board: string,
    config: Body<'/admin/boards/{board}', 'put'>,
    query: Query<'/admin/boards/{board}', 'put'> = {},
    options?: CallOptions,
  ): Answer<'/admin/boards/{board}', 'put'> {
    const route = { method: 'PUT', path: '/admin/boards/{board}', params: { board }, query, body: config } as const;
    // A PUT repeated is the same board: safe to retry (with reset=true too: the data is dropped either way).
    return this.send({ ...route, repeat: 'safe' }, options);
  }

  /** Deletes a board and every key it has; admin. Not repeated after a lost answer (a repeat is a 404). */
  delete(board: string, options?: CallOptions): Promise<void> {
    return this.send({ method: 'DELETE', path: '/admin/boards/{board}', params: { board }, repeat: 'unsafe' }, options);
  }

  list(query: Query<'/boards', 'get'> = {}, options?: CallOptions): Answer<'/boards', 'get'> {
    return this.send({ method: 'GET', path: '/boards', query, repeat: 'safe' }, options);
  }

  get(board: string, options?: CallOptions): Answer<'/boards/{board}', 'get'> {
    return this.send({ method: 'GET', path: '/boards/{board}', params: { board }, repeat: 'safe' }, options);
  }

  /** Adds `amount` (default 1) to an item in every window; answers each window's new score and rank. */
  increment(
    board: string,
    item: string,
    body: Body<'/boards/{board}/items/{item}/increment', 'post'> = {},
    options?: CallOptions,
  ): Answer<'/boards/{board}/items/{item}/increment', 'post'> {
    const path = '/boards/{board}/items/{item}/increment';
    return this.send({ method: 'POST', path, params: { board, item }, body, repeat: 'safe', keyed: true }, options);
  }

  /** Records a score on a max / min / last board; answers each window's score and rank as increment does. */
  score(
    board: string,
    item: string,
    body: Body<'/boards/{board}/items/{item}/score', 'post'>,
    options?: CallOptions,
  ): Answer<'/boards/{board}/items/{item}/score', 'post'> {
    const path = '/boards/{board}/items/{item}/score';
    return this.send({ method: 'POST', path, params: { board, item }, body, repeat: 'safe', keyed: true }, options);
  }

  /** Up to 1000 increments in one atomic step (all or nothing). */
  batch(
    board: string,
    items: Body<'/boards/{board}/increments', 'post'>['items'],
    options?: CallOptions,
  ): Answer<'/boards/{board}/increments', 'post'> {
    const path = '/boards/{board}/increments';
    return this.send(
      { method: 'POST', path, params: { board }, body: { items }, repeat: 'safe', keyed: true },
      options,
    );
  }

  /** Counts a user's like once while it is inside any window (`counted: false` for a repeat like). */
  like(
    board: string,
    item: string,
    userId: string,
    body: Omit<Body<'/boards/{board}/items/{item}/likes', 'post'>, 'userId'> = {},
    options?: CallOptions,
  ): Answer<'/boards/{board}/items/{item}/likes', 'post'> {
    const path = '/boards/{board}/items/{item}/likes';
    const route = { method: 'POST', path, params: { board, item }, body: { ...body, userId } } as const;
    return this.send({ ...route, repeat: 'safe', keyed: true }, options);
  }

  /** Takes a like back out of every window that still holds it. */
  unlike(
    board: string,
    item: string,
    userId: string,
    options?: CallOptions,
  ): Answer<'/boards/{board}/items/{item}/likes/{userId}', 'delete'> {
    const path = '/boards/{board}/items/{item}/likes/{userId}';
    return this.send({ method: 'DELETE', path, params: { board, item, userId }, repeat: 'safe', keyed: true }, options);
  }

  /** The window's (or view's) top `limit` items from `offset`, highest score first. */
  top(
    board: string,
    query: Query<'/boards/{board}/top', 'get'> = {},
    options?: CallOptions,
  ): Answer<'/boards/{board}/top', 'get'> {
    const path = '/boards/{board}/top';
    return this.send({ method: 'GET', path, params: { board }, query, repeat: 'safe' }, options);
  }

  /** An item's score, rank and percentile (score 0, rank null when the window holds nothing of it). */
  item(
    board: string,
    item: string,
    query: Query<'/boards/{board}/items/{item}', 'get'> = {},
    options?: CallOptions,
  ): Answer<'/boards/{board}/items/{item}', 'get'> {
    const path = '/boards/{board}/items/{item}';
    return this.send({ method: 'GET', path, params: { board, item }, query, repeat: 'safe' }, options);
  }

  /** An item with up to `radius` neighbours on each side. */
  around(
    board: string,
    item: string,
    query: Query<'/boards/{board}/items/{item}/around', 'get'> = {},
    options?: CallOptions,
  ): Answer<'/boards/{board}/items/{item}/around', 'get'> {
    const path = '/boards/{board}/items/{item}/around';
    return this.send({ method: 'GET', path, params: { board, item }, query, repeat: 'safe' }, options);
  }

  /** Scores and ranks of up to 1 000 ids (board ranks, or with `relative` ranks among them), in the order given. */
  lookup(
    board: string,
    body: Body<'/boards/{board}/lookup', 'post'>,
    query: Query<'/boards/{board}/lookup', 'post'> = {},
    options?: CallOptions,
  ): Answer<'/boards/{board}/lookup', 'post'> {
    const path = '/boards/{board}/lookup';
    return this.send({ method: 'POST', path, params: { board }, query, body, repeat: 'safe' }, options);
  }

  /** A viewer's filtered page of a window: without excluded items and groups, at most perGroup rows of a group. */
  query(
    board: string,
    body: Body<'/boards/{board}/query', 'post'>,
    options?: CallOptions,
  ): Answer<'/boards/{board}/query', 'post'> {
    const path = '/boards/{board}/query';
    return this.send({ method: 'POST', path, params: { board }, body, repeat: 'safe' }, options);
  }

  /** The rank and percentile a record of `score` would get now, without writing it. */
  rankOf(
    board: string,
    query: Query<'/boards/{board}/rank', 'get'>,
    options?: CallOptions,
  ): Answer<'/boards/{board}/rank', 'get'> {
    const path = '/boards/{board}/rank';
    return this.send({ method: 'GET', path, params: { board }, query, repeat: 'safe' }, options);
  }

  /** The window's listed scores: count, range, equal-width buckets and exact quantiles (p10-p99). */
  distribution(
    board: string,
    query: Query<'/boards/{board}/distribution', 'get'> = {},
    options?: CallOptions,
  ): Answer<'/boards/{board}/distribution', 'get'> {
    const path = '/boards/{board}/distribution';
    return this.send({ method: 'GET', path, params: { board }, query, repeat: 'safe' }, options);
  }

  /** Stores an item's data (a JSON object of at most 1 024 bytes), kept while some window holds the item. */
  putData(board: string, item: string, data: Record<string, unknown>, options?: CallOptions): Promise<void> {
    const path = '/boards/{board}/items/{item}/data';
    return this.send(
      { method: 'PUT', path, params: { board, item }, body: data, repeat: 'safe', keyed: true },
      options,
    );
  }

  /** Removes an item's data. */
  deleteData(board: string, item: string, options?: CallOptions): Promise<void> {
    const path = '/boards/{board}/items/{item}/data';
    return this.send({ method: 'DELETE', path, params: { board, item }, repeat: 'safe', keyed: true }, options);
  }

  /** The board's segments holding live data, by name, each with the items it holds (`cursor` pages on). */
  segments(
    board: string,
    query: Query<'/boards/{board}/segments', 'get'> = {},
    options?: CallOptions,
  ): Answer<'/boards/{board}/segments', 'get'> {
    const path = '/boards/{board}/segments';
    return this.send({ method: 'GET', path, params: { board }, query, repeat: 'safe' }, options);
  }

  /** Starts retracting an actor's events or an item (admin); repeated with its Idempotency-Key, it answers the same retraction. */
  retract(
    board: string,
    body: Body<'/admin/boards/{board}/retractions', 'post'>,
    options?: CallOptions,
  ): Answer<'/admin/boards/{board}/retractions', 'post'> {
    const path = '/admin/boards/{board}/retractions';
    return this.send({ method: 'POST', path, params: { board }, body, repeat: 'safe', keyed: true }, options);
  }

  /** A retraction's progress (admin): `state` running or done, `events`, `amount`. */
  retraction(
    board: string,
    id: string,
    options?: CallOptions,
  ): Answer<'/admin/boards/{board}/retractions/{id}', 'get'> {
    const path = '/admin/boards/{board}/retractions/{id}';
    return this.send({ method: 'GET', path, params: { board, id }, repeat: 'safe' }, options);
  }

  /** Sets an actor's weight (admin): its events count amount × weight, its live ones re-weighted; a repeat changes nothing. */
  weighActor(
    board: string,
    actor: string,
    body: Body<'/admin/boards/{board}/actors/{actor}', 'put'>,
    options?: CallOptions,
  ): Answer<'/admin/boards/{board}/actors/{actor}', 'put'> {
    const path = '/admin/boards/{board}/actors/{actor}';
    return this.send({ method: 'PUT', path, params: { board, actor }, body, repeat: 'safe', keyed: true }, options);
  }

  /** An actor's weight and its re-weighting's progress (admin): `state` running or done, `events`. */
  actorWeight(
    board: string,
    actor: string,
    options?: CallOptions,
  ): Answer<'/admin/boards/{board}/actors/{actor}', 'get'> {
    const path = '/admin/boards/{board}/actors/{actor}';
    return this.send({ method: 'GET', path, params: { board, actor }, repeat: 'safe' }, options);
  }

  /** A window's listing at a slot boundary (the latest snapshot, or the latest at or before `at`). */
  history(
    board: string,
    query: Query<'/boards/{board}/history', 'get'> = {},
    options?: CallOptions,
  ): Answer<'/boards/{board}/history', 'get'> {
    const path = '/boards/{board}/history';
    return this.send({ method: 'GET', path, params: { board }, query, repeat: 'safe' }, options);
  }

  /** An item's rank and score at each kept snapshot, oldest first. */
  itemHistory(
    board: string,
    item: string,
    query: Query<'/boards/{board}/items/{item}/history', 'get'> = {},
    options?: CallOptions,
  ): Answer<'/boards/{board}/items/{item}/history', 'get'> {
    const path = '/boards/{board}/items/{item}/history';
    return this.send({ method: 'GET', path, params: { board, item }, query, repeat: 'safe' }, options);
  }

  /** The live top N as an async iterator that reconnects and resumes; see WatchOptions. */
  watchTop(board: string, options?: WatchOptions): AsyncGenerator<TopEvent, void, undefined> {
    return watchTop(this.transport, board, options);
  }
}
