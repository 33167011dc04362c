import { Clock } from '../src/common/clock';

/** A clock that only moves when told to: makes window and slot tests deterministic without sleeping. */
export class FakeClock extends Clock {
  constructor(private currentMs = 0) {
    super();
  }

  nowMs(): number {
    return this.currentMs;
  }

  setMs(ms: number): void {
    this.currentMs = ms;
  }

  advanceMs(ms: number): void {
    this.currentMs += ms;
  }

  advanceSec(sec: number): void {
    this.currentMs += sec * 1000;
  }
}
