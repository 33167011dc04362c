import { Agent, createServer, IncomingMessage, request, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** What the proxy does with one request. */
export type HttpFault =
  /** Forwarded, and the answer relayed as it comes (streams too). */
  | 'pass'
  /** The client's connection is reset before anything is forwarded: the service never sees the request. */
  | 'reset'
  /** Forwarded whole; once the service has answered (the write applied), the client's connection is destroyed. */
  | 'drop-answer';

export interface HttpFaultShares {
  /** Share of requests reset before forwarding, 0-1. */
  reset: number;
  /** Share of requests whose answer is dropped after the service applied them, 0-1. */
  dropAnswer: number;
}

/**
 * An HTTP proxy in front of the service that loses requests and answers on purpose, as a flaky
 * network or load balancer does: some connections are reset before the request reaches the service,
 * some answers are thrown away after the service applied the request. `counts` says how often each
 * happened, so a test can prove the faults it survived were real. `cutStreams()` ends every
 * connection that is relaying an answer (an event stream) at once.
 */
export class HttpFaultProxy {
  readonly counts: Record<HttpFault, number> = { pass: 0, reset: 0, 'drop-answer': 0 };
  shares: HttpFaultShares = { reset: 0, dropAnswer: 0 };
  private readonly streaming = new Set<Socket>();
  private readonly upstream = new Agent({ keepAlive: true });

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly target: URL,
    /** [0, 1) source deciding each request's fate. */
    private readonly random: () => number,
  ) {}

  static async start(target: string, random: () => number = Math.random): Promise<HttpFaultProxy> {
    const started: { proxy?: HttpFaultProxy } = {};
    const server = createServer((req, res) => started.proxy?.relay(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('the proxy has no port');
    started.proxy = new HttpFaultProxy(server, `http://127.0.0.1:${address.port}`, new URL(target), random);
    return started.proxy;
  }

  /** Destroys every connection relaying an answer now (the live streams), as a dropped network path would. */
  cutStreams(): number {
    const cut = this.streaming.size;
    for (const socket of this.streaming) socket.destroy();
    return cut;
  }

  async close(): Promise<void> {
    this.cutStreams();
    this.server.closeAllConnections();
    this.upstream.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private fate(): HttpFault {
    const draw = this.random();
    if (draw < this.shares.reset) return 'reset';
    if (draw < this.shares.reset + this.shares.dropAnswer) return 'drop-answer';
    return 'pass';
  }

  private relay(req: IncomingMessage, res: ServerResponse): void {
    const fault = this.fate();
    this.counts[fault]++;
    if (fault === 'reset') {
      // An RST, not a clean close: what the client sees when a middlebox gives up on the connection.
      req.socket.resetAndDestroy();
      return;
    }
    const forwarded = request(
      {
        host: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent: this.upstream,
      },
      (answer) => {
        if (fault === 'drop-answer') {
          // Read the whole answer first: the service has applied the request and sent its reply.
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        this.streaming.add(req.socket);
        answer.pipe(res);
        answer.on('end', () => this.streaming.delete(req.socket));
        res.on('close', () => {
          this.streaming.delete(req.socket);
          answer.destroy();
        });
      },
    );
    forwarded.on('error', () => req.socket.destroy());
    req.pipe(forwarded);
  }
}
