/**
 * A window option (`allTime`, `calendar`, `snapshots`, and the next ones): a setting of one window of a
 * board, in its own folder as a board option is, and a line of WINDOW_OPTIONS (window-registry.ts). The
 * core and the DTOs name no window option: they ask the window registry.
 *
 * `Spec` is its part of the window config (WindowSpec: what the store keeps, as the window's JSON in the
 * board's config hash, and hands back as it is). `View` is what the window's view shows of it, `Put` its
 * fields of a board PUT's window (WindowDto): its spec's, unless the PUT takes them otherwise.
 */
import type { Type } from '@nestjs/common';

/** What every window holds, whatever its options: its name and its slots. */
export interface WindowSlots {
  name: string;
  periodSec: number;
  intervalSec: number;
}

/** A window of a board PUT as the DTO validated it: its own fields and every window option's. */
export type WindowPut = Readonly<Record<string, unknown>> & {
  readonly name?: string;
  readonly period?: string | number;
  readonly interval?: string | number;
};

/**
 * Windows of a kind of their own (calendar, all time) instead of rolling ones: the kind sets their
 * slots, and the other options' fields (snapshots) are not theirs.
 */
export interface WindowKind<Spec extends object> {
  /** Whether a PUT window asks this kind (`calendar` set, `allTime: true`); the first option asked makes it. */
  asked(input: WindowPut): boolean;
  /**
   * The window (name, slots and setting) from the PUT's; throws InvalidInputError on what it cannot
   * take, `others` among them: the other window options' fields the PUT window sets.
   */
  resolve(input: WindowPut, field: string, others: readonly string[]): WindowSlots & Spec;
  /** Whether a stored window is of this kind (its view is then the kind's alone). */
  holds(window: Readonly<WindowSlots & Spec>): boolean;
  /** Whether its windows' views show their period and interval (an all-time window has neither). */
  readonly showsSpan: boolean;
}

export interface WindowOption<Spec extends object, View extends object = Partial<Spec>, Put extends object = Spec> {
  /** The option's name (its folder's). */
  readonly name: string;
  /** Its fields of a PUT window, with their schema and validation decorators (WindowDto takes them in). */
  readonly putFields: Type<Put>;
  /** Its fields of a window's view, with their schema decorators (WindowViewDto takes them in). */
  readonly viewFields: Type<View>;
  /** The fields of `Put`. */
  readonly putKeys: readonly (keyof Put & string)[];
  /** Those of its fields a PUT window sets; absent: the ones it holds (not undefined). */
  setIn?(input: WindowPut): readonly string[];
  /** Present on an option whose windows are a kind of their own. */
  readonly kind?: WindowKind<Spec>;
  /**
   * Its setting of a rolling window from the PUT window (absent fields: off); throws InvalidInputError
   * on a field a rolling window cannot take. Absent: the PUT's fields of `putKeys`, as they are.
   */
  fromPut?(input: WindowPut, field: string): Spec;
  /** What the window's view shows of it (nothing when off). */
  view(window: Readonly<WindowSlots & Spec>): View;
}
