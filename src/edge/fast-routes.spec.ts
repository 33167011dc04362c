import { CanActivate, Controller, Get, Param, Query, UseGuards, UseInterceptors } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { Clock, SystemClock } from '../common/clock';
import { CompiledValidation, NAME_FIELD } from '../common/compiled-checks';
import { AppErrorFilter } from './error.filter';
import { FastRoute, FastRoutes } from './fast-routes';

@CompiledValidation({ board: NAME_FIELD })
class NameParams {
  board!: string;
}

class PlainQuery {
  limit?: number;
}

class Admit implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

@Controller()
class PlainController {
  @Get('plain/:board')
  @FastRoute()
  plain(@Param() params: NameParams): object {
    return params;
  }
}

@Controller()
class GuardedController {
  @Get('guarded/:board')
  @FastRoute()
  @UseGuards(Admit)
  guarded(@Param() params: NameParams): object {
    return params;
  }
}

@Controller()
class InterceptedController {
  @Get('intercepted/:board')
  @FastRoute()
  @UseInterceptors({ intercept: (_context, next) => next.handle() })
  intercepted(@Param() params: NameParams): object {
    return params;
  }
}

@Controller()
class UncheckedController {
  @Get('unchecked/:board')
  @FastRoute()
  unchecked(@Param() params: NameParams, @Query() query: PlainQuery): object {
    return { ...params, ...query };
  }
}

@Controller()
class PartController {
  @Get('part/:board')
  @FastRoute()
  part(@Param('board') board: string): object {
    return { board };
  }
}

@Controller()
class UndecoratedController {
  @Get('undecorated/:board')
  @FastRoute()
  undecorated(@Param() params: NameParams, extra?: string): object {
    return { ...params, extra };
  }
}

async function boot(controller: new () => object): Promise<NestFastifyApplication> {
  const module = await Test.createTestingModule({
    controllers: [controller],
    providers: [AppErrorFilter, FastRoutes, { provide: Clock, useClass: SystemClock }],
  }).compile();
  const app = module.createNestApplication<NestFastifyApplication>(new FastifyAdapter());
  app.get(FastRoutes).register(app.getHttpAdapter().getInstance(), []);
  await app.init();
  return app;
}

describe('FastRoutes', () => {
  it('takes over a route whose parameters are whole DTOs with compiled checks', async () => {
    const app = await boot(PlainController);
    try {
      expect(app.get(FastRoutes).takenOver).toEqual(['GET /plain/:board']);
      const answer = await app.getHttpAdapter().getInstance().inject({ url: '/plain/b1' });
      expect([answer.statusCode, answer.json()]).toEqual([200, { board: 'b1' }]);
      expect(app.get(FastRoutes).answered).toBe(1);
    } finally {
      await app.close();
    }
  });

  it.each([
    [GuardedController, /GuardedController.guarded .*__guards__/],
    [InterceptedController, /InterceptedController.intercepted .*__interceptors__/],
    [UncheckedController, /UncheckedController.unchecked .*compiled check/],
    [PartController, /PartController.part .*whole values/],
    [UndecoratedController, /UndecoratedController.undecorated .*needs a decorator/],
  ])('refuses to boot with what it cannot honour: %p', async (controller, message) => {
    await expect(boot(controller)).rejects.toThrow(message);
  });
});
