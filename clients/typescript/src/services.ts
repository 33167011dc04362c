import type { CallOptions } from './transport.js';
import { type Answer, type Body, type Query, Routes } from './routes.js';

export class Counters extends Routes {
  /** Adds `count` (default 1) at every precision, at `at` (unix s, default now). */
  increment(
    name: string,
    body: Body<'/counters/{name}/increment', 'post'> = {},
    options?: CallOptions,
  ): Answer<'/counters/{name}/increment', 'post'> {
    const path = '/counters/{name}/increment';
    return this.send({ method: 'POST', path, params: { name }, body, repeat: 'safe', keyed: true }, options);
  }

  /** Samples of one precision, oldest first. */
  read(
    name: string,
    query: Query<'/counters/{name}', 'get'>,
    options?: CallOptions,
  ): Answer<'/counters/{name}', 'get'> {
    return this.send({ method: 'GET', path: '/counters/{name}', params: { name }, query, repeat: 'safe' }, options);
  }

  list(query: Query<'/counters', 'get'> = {}, options?: CallOptions): Answer<'/counters', 'get'> {
    return this.send({ method: 'GET', path: '/counters', query, repeat: 'safe' }, options);
  }

  /** Deletes a counter (admin). */
  delete(name: string, options?: CallOptions): Promise<void> {
    return this.send({ method: 'DELETE', path: '/admin/counters/{name}', params: { name }, repeat: 'unsafe' }, options);
  }
}

export class Stats extends Routes {
  /** Records one value in the current hour. */
  record(
    context: string,
    type: string,
    value: number,
    options?: CallOptions,
  ): Answer<'/stats/{context}/{type}', 'post'> {
    const path = '/stats/{context}/{type}';
    const route = { method: 'POST', path, params: { context, type }, body: { value } } as const;
    return this.send({ ...route, repeat: 'safe', keyed: true }, options);
  }

  /** Count, sum, min, max, average, stddev and p50/p90/p99 of an hour. */
  read(
    context: string,
    type: string,
    query: Query<'/stats/{context}/{type}', 'get'> = {},
    options?: CallOptions,
  ): Answer<'/stats/{context}/{type}', 'get'> {
    const path = '/stats/{context}/{type}';
    return this.send({ method: 'GET', path, params: { context, type }, query, repeat: 'safe' }, options);
  }

  /** Routes with the slowest average access time (admin). */
  slowest(
    query: Query<'/admin/stats/slowest', 'get'> = {},
    options?: CallOptions,
  ): Answer<'/admin/stats/slowest', 'get'> {
    return this.send({ method: 'GET', path: '/admin/stats/slowest', query, repeat: 'safe' }, options);
  }

  /** Contexts and types recorded in the current or previous hour (admin). */
  list(query: Query<'/admin/stats', 'get'> = {}, options?: CallOptions): Answer<'/admin/stats', 'get'> {
    return this.send({ method: 'GET', path: '/admin/stats', query, repeat: 'safe' }, options);
  }
}

class ApiKeys extends Routes {
  /** Makes a key; the answer holds its secret, once. Not repeated after a lost answer (the secret would be lost). */
  create(body: Body<'/admin/keys', 'post'>, options?: CallOptions): Answer<'/admin/keys', 'post'> {
    return this.send({ method: 'POST', path: '/admin/keys', body, repeat: 'unsafe' }, options);
  }

  list(options?: CallOptions): Answer<'/admin/keys', 'get'> {
    return this.send({ method: 'GET', path: '/admin/keys', repeat: 'safe' }, options);
  }

  /** Revokes a stored key. */
  delete(name: string, options?: CallOptions): Promise<void> {
    return this.send({ method: 'DELETE', path: '/admin/keys/{name}', params: { name }, repeat: 'unsafe' }, options);
  }
}

export class Admin extends Routes {
  readonly keys = new ApiKeys(this.transport);

  /** This instance's per-route figures over the last `seconds`. */
  localMetrics(
    query: Query<'/admin/metrics/local', 'get'> = {},
    options?: CallOptions,
  ): Answer<'/admin/metrics/local', 'get'> {
    return this.send({ method: 'GET', path: '/admin/metrics/local', query, repeat: 'safe' }, options);
  }
}

export class Health extends Routes {
  /** Resolves while the process runs. */
  live(options?: CallOptions): Promise<{ status: string }> {
    return this.send({ method: 'GET', path: '/health/live', repeat: 'safe' }, options);
  }

  /** Resolves when the service reaches Redis; a TrendboardError NOT_READY otherwise (not retried). */
  ready(options?: CallOptions): Promise<object> {
    return this.send({ method: 'GET', path: '/health/ready', repeat: 'safe' }, options);
  }
}
