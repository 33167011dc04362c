import { createParamDecorator, ExecutionContext, Injectable, PipeTransform } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { RateLimitGuard } from './rate-limit.guard';

/** What a read spends of its client's read rate budget beyond the one read its route counted. */
export type ReadCharge = (count: number) => void;

/** The request a charge is for, and the units a read (undefined: the charge counts reads). */
interface ChargeOf {
  request: FastifyRequest;
  perRead: number | undefined;
}

/** Makes a request's ReadCharge with the app's RateLimitGuard (readsOf, or unitsOf `perRead`). */
@Injectable()
export class ReadChargePipe implements PipeTransform<ChargeOf, ReadCharge> {
  constructor(private readonly limits: RateLimitGuard) {}

  transform({ request, perRead }: ChargeOf): ReadCharge {
    return perRead === undefined ? this.limits.readsOf(request) : this.limits.unitsOf(request, perRead);
  }
}

const chargeOf = createParamDecorator((perRead: number | undefined, context: ExecutionContext): ChargeOf => ({
  request: context.switchToHttp().getRequest<FastifyRequest>(),
  perRead,
}));

/**
 * The handler's ReadCharge: of the reads it makes, or with `perRead` of its work in units, `perRead`
 * units a read. For the reads off the hot path: a parameter decorator costs each request about 5 µs
 * (see idempotencyKeyOf), so the @FastRoute() reads take @Req and call RateLimitGuard themselves.
 */
export const Charge = (perRead?: number) => chargeOf(perRead, ReadChargePipe);
