import { Injectable, Logger, OnModuleInit, Optional } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { featureCounter, featureGauge, registerOnAppRegistry } from '../governance/app-registry';

/** Why a stream ended: the first five close it after what is buffered, the last two cut it. */
export type StreamEnd = 'client' | 'lifetime' | 'revoked' | 'board_gone' | 'shutdown' | 'idle' | 'buffer';
const CUT: ReadonlySet<StreamEnd> = new Set(['idle', 'buffer']);

const SAID: Record<StreamEnd, string> = {
  client: 'the client closed it',
  lifetime: 'it reached STREAM_MAX_LIFETIME_MS',
  revoked: 'its API key was revoked',
  board_gone: 'its board or window is gone',
  shutdown: 'the instance is stopping',
  idle: 'cut: the client read nothing for STREAM_IDLE_TIMEOUT_MS',
  buffer: 'cut: the client left too many bytes unread',
};

/** What the log says of a stream: its board, window and segment, and its client. */
export interface StreamLabel {
  board: string;
  window: string;
  segment?: string;
  owner: string;
}

/**
 * Live streams in the log (a line when one opens, one when it ends, saying why and after how long) and
 * on /metrics: the streams open now, and those opened, closed and cut (by reason) since start.
 */
@Injectable()
export class StreamMetrics implements OnModuleInit {
  private readonly logger = new Logger('LiveStreams');
  private open = 0;
  private readonly openGauge = featureGauge(
    'trendboard_streams_open',
    'Live streams (SSE) this instance holds open now',
  );
  private readonly opened = featureCounter('trendboard_streams_opened_total', 'Live streams this instance opened');
  private readonly closed = featureCounter(
    'trendboard_streams_closed_total',
    'Live streams ended after what was buffered, by reason: client, lifetime, revoked, board_gone, shutdown',
    ['reason'],
  );
  private readonly cut = featureCounter(
    'trendboard_streams_cut_total',
    'Live streams cut with bytes unread, by reason: idle (read nothing for STREAM_IDLE_TIMEOUT_MS), buffer (too many bytes unread)',
    ['reason'],
  );

  /** Without `modules` (a graph built by hand: tests, benchmarks) the figures are kept but not exported. */
  constructor(@Optional() private readonly modules?: ModuleRef) {}

  onModuleInit(): void {
    registerOnAppRegistry(this.modules, [this.openGauge, this.opened, this.closed, this.cut]);
  }

  /** A stream opened; answers what to call once when it ends. */
  streamOpened(label: StreamLabel, nowMs: number): (reason: StreamEnd, endedAtMs: number) => void {
    this.open++;
    this.openGauge.set(this.open);
    this.opened.inc();
    const what = `board ${label.board}, window ${label.window}${label.segment ? `, segment ${label.segment}` : ''}`;
    this.logger.log(`stream opened: ${what} (client ${label.owner}; ${this.open} open)`);
    let ended = false;
    return (reason, endedAtMs) => {
      if (ended) return;
      ended = true;
      this.open--;
      this.openGauge.set(this.open);
      (CUT.has(reason) ? this.cut : this.closed).inc({ reason });
      const afterSec = ((endedAtMs - nowMs) / 1000).toFixed(1);
      this.logger.log(`stream ended after ${afterSec} s, ${SAID[reason]}: ${what} (${this.open} open)`);
    };
  }
}
