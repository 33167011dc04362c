import type { Type } from '@nestjs/common';
import { allTimeOption } from './all-time/all-time.option';
import { calendarWindowOption } from './calendar/calendar.option';
import { snapshotsWindowOption } from './snapshots/snapshots.option';
import type { WindowOption, WindowPut, WindowSlots } from './window-option';
import type { Intersection } from './board-option';

/** Every window option, one line each (src/ranking/options/<option>/); kinds first: the first asked makes the window. */
export const WINDOW_OPTIONS = [allTimeOption, calendarWindowOption, snapshotsWindowOption] as const;

type AnyWindowOption = WindowOption<object, object, object>;
type FragmentsOf<O> = O extends WindowOption<infer S, infer V, infer P> ? { spec: S; view: V; put: P } : never;
type Fragments = FragmentsOf<(typeof WINDOW_OPTIONS)[number]>;

/** The window options' fragments of a window config, together (WindowSpec extends it). */
export type WindowOptionsSpec = Intersection<Fragments['spec']>;

/** What a window's view shows of the window options. */
export type WindowOptionsView = Intersection<Fragments['view']>;

/** The window options' fields of a PUT window, together (WindowDto extends it). */
export type WindowOptionsPut = Intersection<Fragments['put']>;

// The list as the registry's loops take it: any window option, whatever its fragment.
const options = (): readonly AnyWindowOption[] => WINDOW_OPTIONS;

/** The window options' classes of their PUT window fields, in registry order (WindowDto takes them in as it loads). */
export function windowPutFields(): Array<Type<object>> {
  return options().map((option) => option.putFields);
}

/** The window options' classes of their window view fields, in registry order (WindowViewDto takes them in). */
export function windowViewFields(): Array<Type<object>> {
  return options().map((option) => option.viewFields);
}

/** The fields of `option` a PUT window sets. */
function setIn(option: AnyWindowOption, input: WindowPut): readonly string[] {
  return option.setIn?.(input) ?? option.putKeys.filter((key) => input[key] !== undefined);
}

/**
 * A PUT window resolved: the window of the first kind it asks (its slots and setting, the other
 * options' fields refused by it), else a rolling one, `rolling`'s slots with every option's setting.
 * Throws InvalidInputError naming what is wrong (`field`: the window's place in the PUT).
 */
export function resolveWindow(
  input: WindowPut,
  field: string,
  rolling: (input: WindowPut, field: string) => WindowSlots,
): WindowSlots & WindowOptionsSpec {
  const kind = options().find((option) => option.kind?.asked(input));
  if (kind?.kind) {
    const others = options().flatMap((option) => (option === kind ? [] : setIn(option, input)));
    return kind.kind.resolve(input, field, others) as WindowSlots & WindowOptionsSpec;
  }
  const settings = options().map(
    (option): object =>
      option.fromPut?.(input, field) ?? Object.fromEntries(setIn(option, input).map((key) => [key, input[key]])),
  );
  return Object.assign(rolling(input, field), ...settings) as WindowSlots & WindowOptionsSpec;
}

/**
 * What a window's view shows of the window options: a kind's window its kind's view alone (and whether
 * it shows the window's period and interval), a rolling window every other option's.
 */
export function windowOptionsView(window: Readonly<WindowSlots & WindowOptionsSpec>): {
  showsSpan: boolean;
  view: Partial<WindowOptionsView>;
} {
  const kind = options().find((option) => option.kind?.holds(window));
  if (kind?.kind) return { showsSpan: kind.kind.showsSpan, view: kind.view(window) };
  const views = options().flatMap((option) => (option.kind ? [] : [option.view(window)]));
  return { showsSpan: true, view: Object.assign({}, ...views) as Partial<WindowOptionsView> };
}
