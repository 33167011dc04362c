import {
  applyDecorators,
  CanActivate,
  Controller,
  ExecutionContext,
  Get,
  NotFoundException,
  Param,
  Query,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { Observable, of } from 'rxjs';
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

/** Admits a request that says `x-checked` from the request alone; asked otherwise, counts its contexts. */
class CheckedGuard implements CanActivate {
  contexts = 0;
  admitsChecked(request: FastifyRequest, handler: object, owner: object): boolean {
    return request.headers['x-checked'] !== undefined && typeof handler === 'function' && owner === PlainController;
  }
  canActivate(context: ExecutionContext): boolean {
    this.contexts++;
    return context.getArgByIndex<FastifyRequest>(0).headers['x-refuse'] === undefined;
  }
}

/** Decides later: in a promise, or an observable for `x-observable`; refuses a request that says `x-refuse`. */
class LaterGuard implements CanActivate {
  canActivate(context: ExecutionContext): Promise<boolean> | Observable<boolean> {
    const request = context.getArgByIndex<FastifyRequest>(0);
    const admitted = request.headers['x-refuse'] === undefined;
    return request.headers['x-observable'] === undefined ? Promise.resolve(admitted) : of(admitted);
  }
}

@Controller()
class FailingController {
  @Get('failing/:board')
  @FastRoute()
  async failing(@Param() params: NameParams): Promise<object> {
    await Promise.resolve();
    throw new NotFoundException(`no ${params.board}`);
  }
}

/** A controller named `name` whose one fast route, GET `path`/:board with `decorators`, answers its params. */
function echoing(name: string, path: string, ...decorators: MethodDecorator[]) {
  @Controller()
  class Echoing {
    @Get(`${path}/:board`)
    @FastRoute()
    @applyDecorators(...decorators)
    echo(@Param() params: NameParams): object {
      return params;
    }
  }
  return Object.defineProperty(Echoing, 'name', { value: name });
}

const PlainController = echoing('PlainController', 'plain');
const GuardedController = echoing('GuardedController', 'guarded', UseGuards(Admit));
const InterceptedController = echoing(
  'InterceptedController',
  'intercepted',
  UseInterceptors({ intercept: (_context, next) => next.handle() }),
);

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

async function boot(controller: new () => object, guards: CanActivate[] = []): Promise<NestFastifyApplication> {
  const module = await Test.createTestingModule({
    controllers: [controller],
    providers: [AppErrorFilter, FastRoutes, { provide: Clock, useClass: SystemClock }],
  }).compile();
  const app = module.createNestApplication<NestFastifyApplication>(new FastifyAdapter());
  app.get(FastRoutes).register(app.getHttpAdapter().getInstance(), guards);
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

  it('answers after a guard that decides later (a promise, an observable), and 403 when it refuses', async () => {
    const app = await boot(PlainController, [new Admit(), new LaterGuard(), new Admit()]);
    try {
      const fastify = app.getHttpAdapter().getInstance();
      const sent = [{}, { 'x-observable': '1' }, { 'x-refuse': '1' }, { 'x-refuse': '1', 'x-observable': '1' }];
      const answers = await Promise.all(sent.map((headers) => fastify.inject({ url: '/plain/b1', headers })));
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 403, 403]);
      expect([answers[0].json(), answers[1].json()]).toEqual([{ board: 'b1' }, { board: 'b1' }]);
      expect(app.get(FastRoutes).answered).toBe(4);
    } finally {
      await app.close();
    }
  });

  it('builds no execution context for a guard that admits the request from what it checked; the guards after it still run', async () => {
    const checked = new CheckedGuard();
    const later = new LaterGuard();
    const app = await boot(PlainController, [checked, later]);
    try {
      const fastify = app.getHttpAdapter().getInstance();
      const sent = [{ 'x-checked': '1' }, { 'x-checked': '1', 'x-refuse': '1' }, {}, { 'x-refuse': '1' }];
      const answers = await Promise.all(sent.map((headers) => fastify.inject({ url: '/plain/b1', headers })));
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 403, 200, 403]);
      // Asked for a context only without `x-checked`: the later guard refused the second request on its own.
      expect(checked.contexts).toBe(2);
    } finally {
      await app.close();
    }
  });

  it("sends a handler's later failure through the error filter", async () => {
    const app = await boot(FailingController, [new Admit()]);
    try {
      const answer = await app.getHttpAdapter().getInstance().inject({ url: '/failing/b1' });
      expect(answer.statusCode).toBe(404);
      expect(answer.json()).toMatchObject({ message: 'no b1' });
      expect(app.get(FastRoutes).answered).toBe(1);
    } finally {
      await app.close();
    }
  });

  it.each([
    [GuardedController, /GuardedController.echo .*__guards__/],
    [InterceptedController, /InterceptedController.echo .*__interceptors__/],
    [UncheckedController, /UncheckedController.unchecked .*compiled check/],
    [PartController, /PartController.part .*whole values/],
    [UndecoratedController, /UndecoratedController.undecorated .*needs a decorator/],
  ])('refuses to boot with what it cannot honour: %p', async (controller, message) => {
    await expect(boot(controller)).rejects.toThrow(message);
  });
});
