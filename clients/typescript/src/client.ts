import { Boards } from './boards.js';
import { Admin, Counters, Health, Stats } from './services.js';
import { type CallOptions, type ClientOptions, Transport } from './transport.js';
import type { TopEvent, WatchOptions } from './watch.js';

/** Each route of the service, called by name. Every method also takes CallOptions last. */
export class TrendboardClient {
  readonly boards: Boards;
  readonly counters: Counters;
  readonly stats: Stats;
  readonly admin: Admin;
  readonly health: Health;
  private readonly transport: Transport;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.boards = new Boards(this.transport);
    this.counters = new Counters(this.transport);
    this.stats = new Stats(this.transport);
    this.admin = new Admin(this.transport);
    this.health = new Health(this.transport);
  }

  /** The live top of a board's window (boards.watchTop). */
  watchTop(board: string, options?: WatchOptions): AsyncGenerator<TopEvent, void, undefined> {
    return this.boards.watchTop(board, options);
  }

  /**
   * Prometheus text (GET /metrics). Public unless the service sets METRICS_TOKEN: then pass
   * `{ headers: { authorization: 'Bearer <METRICS_TOKEN>' } }` (the client would send its apiKey).
   */
  metrics(options?: CallOptions): Promise<string> {
    return this.transport.call({ method: 'GET', path: '/metrics', repeat: 'safe', answer: 'text' }, options);
  }
}
