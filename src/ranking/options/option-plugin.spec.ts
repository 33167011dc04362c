/**
 * Adding a board option takes its folder and its registry line (issue #46): a test-only option, put
 * into the registry's list in a module registry of this spec's own (production code never names it), is
 * validated and documented by the board PUT body, documented by the board view, and carried by the
 * registry's config functions from the PUT to the store and back to the view.
 */
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean } from 'class-validator';
import { IsOptionalNotNull } from '../../common/dto';
import { flagSetting, type BoardOption } from './board-option';

class ProbePutFields {
  @IsBoolean({ message: 'probe must be true or false' })
  @IsOptionalNotNull()
  @ApiPropertyOptional({ description: 'A test-only option' })
  probe?: boolean;
}

class ProbeViewFields {
  @ApiPropertyOptional({ enum: [true], description: 'Present when on' })
  probe?: boolean;
}

const probeOption: BoardOption<{ probe?: boolean }> = {
  ...flagSetting('probe', ['probe_lib.lua']),
  putFields: ProbePutFields,
  viewFields: ProbeViewFields,
};

type Registry = typeof import('./registry');
type BoardDtos = typeof import('../dto/board.dto') & typeof import('../dto/board-view.dto');
type Validation = typeof import('class-transformer') & typeof import('class-validator');

/**
 * The registry with the probe option last in its list, and the board DTOs loaded after it, with the
 * class-transformer and class-validator they were decorated with (each module registry has its own).
 */
function withProbe(): { registry: Registry; dtos: BoardDtos; validation: Validation } {
  let loaded: { registry: Registry; dtos: BoardDtos; validation: Validation } | undefined;
  jest.isolateModules(() => {
    // The list as the probe extends it: the registry's module is typed by its own options only.
    jest.requireActual<{ BOARD_OPTIONS: Array<BoardOption<object>> }>('./registry').BOARD_OPTIONS.push(probeOption);
    const registry = jest.requireActual<Registry>('./registry');
    const load = <T extends object>(path: string) => jest.requireActual<T>(path);
    loaded = {
      registry,
      dtos: { ...load<object>('../dto/board.dto'), ...load<object>('../dto/board-view.dto') } as BoardDtos,
      validation: { ...load<object>('class-transformer'), ...load<object>('class-validator') } as Validation,
    };
  });
  return loaded!;
}

/** The properties a DTO's schema lists (@nestjs/swagger keeps them, as ":<name>", under this key). */
const documented = (dto: object) =>
  Reflect.getMetadata('swagger/apiModelPropertiesArray', (dto as { prototype: object }).prototype) as string[];

describe('a board option is its folder and its registry line (issue #46)', () => {
  const { registry, dtos, validation } = withProbe();
  /** What the global ValidationPipe finds wrong in a board PUT body (its options: src/edge/validation.ts). */
  const errorsOf = async (body: object) => {
    const dto = validation.plainToInstance(dtos.PutBoardDto, body) as object;
    const errors = await validation.validate(dto, {
      whitelist: true,
      forbidNonWhitelisted: true,
      stopAtFirstError: true,
    });
    return errors.flatMap((error) => Object.values(error.constraints ?? { nested: error.property }));
  };
  const windows = [{ name: 'h', period: '1h', interval: '1m' }];

  it('takes the option in the board PUT body, validated by its decorators', async () => {
    expect(await errorsOf({ windows, probe: true })).toEqual([]);
    expect(await errorsOf({ windows, probe: 'yes' })).toEqual(['probe must be true or false']);
    expect(await errorsOf({ windows, probe: null })).toEqual(['probe must not be null']);
    expect(await errorsOf({ windows, probe: true, other: 1 })).toEqual(['property other should not exist']);
  });

  it('documents it in the board PUT body and the board view', () => {
    expect(documented(dtos.PutBoardDto)).toContain(':probe');
    expect(documented(dtos.BoardViewDto)).toContain(':probe');
  });

  it('carries it from the PUT to the store and the view', () => {
    expect(registry.optionsOfPut({ probe: true } as object)).toMatchObject({ probe: true });
    expect(registry.optionsOf({ probe: true } as object)).toMatchObject({ probe: true });
    expect(registry.optionsFromStored({ probe: '1' })).toMatchObject({ probe: true });
    expect(registry.optionsFromReply('board_put', '{"ties":"shared","probe":true}')).toMatchObject({ probe: true });
    expect(registry.optionsView({ probe: true } as object)).toEqual({ probe: true });
    expect(registry.optionsView({})).toEqual({});
  });

  it('leaves the registry every other spec loads as it is', async () => {
    const { BOARD_OPTIONS } = await import('./registry');
    expect(BOARD_OPTIONS.map((option) => option.name)).not.toContain('probe');
  });
});
