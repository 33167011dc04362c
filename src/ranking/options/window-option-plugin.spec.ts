/**
 * Adding a window option takes its folder and its window registry line (issue #46), as a board option
 * does: a test-only window option, put into the window registry's list in a module registry of this
 * spec's own (production code never names it), is validated and documented by the window of a board PUT
 * body, refused by the windows of a kind of their own, documented by the window view, and carried by the
 * registry from the PUT to the stored window and back to its view.
 */
import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import type { ValidationError } from 'class-validator';
import { IsBoolean } from 'class-validator';
import { IsOptionalNotNull } from '../../common/dto';
import { settingFields } from './board-option';
import type { WindowOption } from './window-option';

const probeFields = settingFields<{ probe?: boolean }>('probe', {
  put: () =>
    applyDecorators(
      IsBoolean({ message: 'probe must be true or false' }),
      IsOptionalNotNull(),
      ApiPropertyOptional({ type: 'boolean', description: 'A test-only window option' }),
    ),
  view: () => ApiPropertyOptional({ type: 'boolean', description: 'Present when set' }),
});

/** A trivial window option: one field, taken as the PUT gives it (no fromPut), shown when set. */
const probeOption: WindowOption<{ probe?: boolean }> = {
  name: 'probe',
  ...probeFields,
  putKeys: ['probe'],
  view: (window) => (window.probe === undefined ? {} : { probe: window.probe }),
};

type Loaded = typeof import('./window-registry') &
  typeof import('../core/window-math') &
  typeof import('../boards/stored-windows') &
  typeof import('../dto/board.dto') &
  typeof import('../dto/board-view.dto') &
  typeof import('class-transformer') &
  typeof import('class-validator');

/**
 * The window registry with the probe option last in its list, and what loads after it (the window
 * math, the stored windows, the board DTOs, with the class-transformer and class-validator they were
 * decorated with: each module registry has its own).
 */
function withProbe(): Loaded {
  let loaded: Loaded | undefined;
  jest.isolateModules(() => {
    // The list as the probe extends it: the registry's module is typed by its own options only.
    jest
      .requireActual<{ WINDOW_OPTIONS: Array<WindowOption<object>> }>('./window-registry')
      .WINDOW_OPTIONS.push(probeOption);
    const paths = [
      './window-registry',
      '../core/window-math',
      '../boards/stored-windows',
      '../dto/board.dto',
      '../dto/board-view.dto',
      'class-transformer',
      'class-validator',
    ];
    loaded = Object.assign({}, ...paths.map((path) => jest.requireActual<object>(path))) as Loaded;
  });
  return loaded!;
}

/** The properties a DTO's schema lists (@nestjs/swagger keeps them, as ":<name>", under this key). */
const documented = (dto: object) =>
  Reflect.getMetadata('swagger/apiModelPropertiesArray', (dto as { prototype: object }).prototype) as string[];

/** Every message of a validation's errors, its nested ones' too. */
const messagesOf = (errors: ValidationError[]): string[] =>
  errors.flatMap((error) => [...Object.values(error.constraints ?? {}), ...messagesOf(error.children ?? [])]);

describe('a window option is its folder and its window registry line (issue #46)', () => {
  const loaded = withProbe();
  /** What the global ValidationPipe finds wrong in a board PUT body (its options: src/edge/validation.ts). */
  const errorsOf = async (window: object) => {
    const dto = loaded.plainToInstance(loaded.PutBoardDto, { windows: [window] }) as object;
    const options = { whitelist: true, forbidNonWhitelisted: true, stopAtFirstError: true };
    return messagesOf(await loaded.validate(dto, options));
  };
  const hour = { name: 'h', period: '1h', interval: '1m' };
  const refusal = (window: object) => {
    try {
      loaded.resolveWindows([window]);
    } catch (error) {
      return (error as Error).message;
    }
    return 'not refused';
  };

  it('takes the option in a window of the board PUT body, validated by its decorators', async () => {
    expect(await errorsOf({ ...hour, probe: true })).toEqual([]);
    expect(await errorsOf({ ...hour, probe: 'yes' })).toEqual(['probe must be true or false']);
    expect(await errorsOf({ ...hour, probe: null })).toEqual(['probe must not be null']);
    expect(await errorsOf({ ...hour, probe: true, other: 1 })).toEqual(['property other should not exist']);
  });

  it('is refused on the windows of a kind of their own, each in its words', () => {
    expect(refusal({ name: 'ever', allTime: true, probe: true })).toMatch(/^windows\.0\.probe: an all-time window/);
    expect(refusal({ calendar: 'day', probe: true })).toBe('windows.0.probe does not apply to calendar windows');
  });

  it('documents it in the window of the board PUT body and of the board view', () => {
    expect(documented(loaded.WindowDto)).toContain(':probe');
    expect(documented(loaded.WindowViewDto)).toContain(':probe');
  });

  it('carries it from the PUT to the stored window and its view', () => {
    const [window] = loaded.resolveWindows([{ ...hour, probe: true } as object]);
    expect(window).toEqual({ name: 'h', periodSec: 3600, intervalSec: 60, probe: true });
    const [stored] = loaded.windowsFromStored(JSON.stringify([{ ...window, createdAtMs: 5 }]));
    expect(loaded.windowOptionsView(stored)).toEqual({ showsSpan: true, view: { probe: true } });
    const [plain] = loaded.resolveWindows([hour]);
    expect(loaded.windowOptionsView(plain)).toEqual({ showsSpan: true, view: {} });
  });

  it('leaves the window registry every other spec loads as it is', async () => {
    const { WINDOW_OPTIONS } = await import('./window-registry');
    expect(WINDOW_OPTIONS.map((option) => option.name)).not.toContain('probe');
  });
});
