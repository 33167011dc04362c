import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { get, IncomingMessage } from 'node:http';
import { connect, Socket } from 'node:net';

export interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
  /** A comment line (heartbeat) */
  comment?: string;
}

/** A real HTTP client reading a Server-Sent Events stream: collects events, waits for the next ones. */
export class SseReader {
  readonly events: SseEvent[] = [];
  /** Everything received (an error answer's JSON body, for one). */
  text = '';
  ended = false;
  private buffer = '';
  private waiters: Array<() => void> = [];

  private constructor(readonly response: IncomingMessage) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      this.text += chunk;
      this.buffer += chunk;
      let cut: number;
      while ((cut = this.buffer.indexOf('\n\n')) >= 0) {
        const block = this.buffer.slice(0, cut);
        this.buffer = this.buffer.slice(cut + 2);
        const event: SseEvent = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) event.comment = line.slice(1).trim();
          const match = /^(id|event|data): ?(.*)$/.exec(line);
          if (match) event[match[1] as 'id' | 'event' | 'data'] = match[2];
        }
        if (event.event || event.comment) this.events.push(event);
      }
      this.wake();
    });
    response.on('end', () => {
      this.ended = true;
      this.wake();
    });
    response.on('close', () => {
      this.ended = true;
      this.wake();
    });
  }

  /** Opens a stream: resolves with the reader once the headers came (any status). */
  static open(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
    return new Promise((resolve, reject) => {
      get(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) =>
        resolve(new SseReader(response)),
      ).on('error', reject);
    });
  }

  /** Events named `event` (data parsed). */
  named<T = unknown>(event: string): T[] {
    return this.events.filter((e) => e.event === event).map((e) => JSON.parse(e.data ?? 'null') as T);
  }

  /** Resolves once `count` events (or comments) have arrived, or rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count) {
      if (this.ended) throw new Error(`stream ended after ${this.events.length} event(s), waiting for ${count}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.events.length} event(s) after ${timeoutMs} ms, waiting for ${count}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves when the server ends the stream. */
  async waitForEnd(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('the stream did not end');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.response.destroy();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * A client that sends the stream request and never reads a byte of the answer: what it is sent fills
 * the kernel's buffers, then the server's. Its socket is what the server's `remotePort` names.
 */
export class StalledReader {
  private constructor(readonly socket: Socket) {}

  static open(url: string, headers: Record<string, string> = {}): Promise<StalledReader> {
    const { hostname, port, pathname, search } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        const lines = Object.entries({ host: `${hostname}:${port}`, accept: 'text/event-stream', ...headers });
        socket.write(`GET ${pathname}${search} HTTP/1.1\r\n${lines.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
        socket.pause();
        resolve(new StalledReader(socket));
      });
      socket.on('error', () => undefined);
      socket.once('error', reject);
    });
  }

  get localPort(): number | undefined {
    return this.socket.localPort;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Starts an app listening on a free localhost port (an e2e file's app listens already); answers its base URL. */
export async function listen(app: NestFastifyApplication): Promise<string> {
  if (!app.getHttpServer().listening) await app.listen(0, '127.0.0.1');
  return (await app.getUrl()).replace('[::1]', '127.0.0.1');
}

/** Waits (polling, at most 5 s) for what the server does on its own after a client's action (a socket closed). */
export async function waitUntil(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
