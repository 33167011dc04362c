/**
 * Key naming. Every key starts with the configured prefix; keys a script touches together share one
 * hash tag (`{...}`) so every script runs on one Redis Cluster slot. Names are validated elsewhere to
 * contain no braces, so a name can never break out of its tag.
 */
export class KeyBuilder {
  constructor(readonly prefix: string) {}

  /** Set of board names (a plain key, written on its own: it is never touched together with a board's keys). */
  boardRegistry(): string {
    return `${this.prefix}boards`;
  }

  board(board: string): BoardKeys {
    return new BoardKeys(`{${this.prefix}board:${board}}`);
  }
}

export class BoardKeys {
  constructor(readonly tag: string) {}

  cfg(): string {
    return `${this.tag}:cfg`;
  }

  likes(): string {
    return `${this.tag}:likes`;
  }

  slots(window: string): string {
    return `${this.tag}:${window}:slots`;
  }

  /** Slot hashes are also derived inside the scripts from `slots(window)` by the same rule. */
  slot(window: string, slotStartSec: number): string {
    return `${this.tag}:${window}:slot:${slotStartSec}`;
  }

  top(window: string): string {
    return `${this.tag}:${window}:top`;
  }
}
