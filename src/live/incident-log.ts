import { Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { LIVE_MESSAGES as M } from './live.messages';
import { STREAM_INCIDENT_LOG_INTERVAL_MS } from './live.limits';

/**
 * Warnings of the live poller, one line per kind at most every STREAM_INCIDENT_LOG_INTERVAL_MS: a
 * flood of failing boards or slow clients is one line with a count, not a line per board per tick.
 */
export class IncidentLog {
  private readonly kinds = new Map<string, { loggedMs: number; suppressed: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  note(kind: string, message: string): void {
    const nowMs = this.clock.nowMs();
    const seen = this.kinds.get(kind);
    if (seen && nowMs - seen.loggedMs < STREAM_INCIDENT_LOG_INTERVAL_MS) {
      seen.suppressed++;
      return;
    }
    this.logger.warn(seen?.suppressed ? message + M.suppressed(seen.suppressed) : message);
    this.kinds.set(kind, { loggedMs: nowMs, suppressed: 0 });
  }
}
