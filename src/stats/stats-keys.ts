import { escapeContext } from './stats-names';

/**
 * Stats key naming. A context/type's two hour hashes share the hash tag
 * `{<prefix>stats:<escaped context>:<type>}` (the context escaped so its braces never end the tag);
 * the index and the slowest list are plain keys, each written on its own.
 */
export class StatsKeys {
  constructor(readonly prefix: string) {}

  tag(context: string, type: string): string {
    return `{${this.prefix}stats:${escapeContext(context)}:${type}}`;
  }

  current(context: string, type: string): string {
    return `${this.tag(context, type)}:cur`;
  }

  previous(context: string, type: string): string {
    return `${this.tag(context, type)}:prev`;
  }

  /** zset: "<context>\t<type>" -> start of the latest hour recorded (unix s). */
  index(): string {
    return `${this.prefix}stats:index`;
  }

  /**
   * zset: context -> average access time (s) in the hour starting at `hourStart`, the 100 slowest kept;
   * one key per hour, expiring once the hour is over, so the list names only this hour's routes.
   */
  slowest(type: string, hourStart: number): string {
    return `${this.prefix}stats:slowest:${type}:${hourStart}`;
  }
}
