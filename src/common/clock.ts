/** The one source of time. Production uses the system clock; tests inject a clock they move by hand. */
export abstract class Clock {
  abstract nowMs(): number;
}

export class SystemClock extends Clock {
  nowMs(): number {
    return Date.now();
  }
}
