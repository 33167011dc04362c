import { RouteConfig } from '@nestjs/platform-fastify';
import { FASTIFY_ROUTE_CONFIG_METADATA } from '@nestjs/platform-fastify/constants';
import { RouteConfigFields } from './route-decorators';

class Routes {
  @RouteConfigFields({ access: 'write' })
  @RouteConfigFields({ fastRoute: true })
  both(): void {}

  @RouteConfigFields({ access: 'read' })
  @RouteConfig({ other: 1 })
  afterNest(): void {}
}

describe('RouteConfigFields', () => {
  it('adds fields to the route config whatever the order, keeping what other decorators put there', () => {
    expect(Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, Routes.prototype.both)).toEqual({
      access: 'write',
      fastRoute: true,
    });
    expect(Reflect.getMetadata(FASTIFY_ROUTE_CONFIG_METADATA, Routes.prototype.afterNest)).toEqual({
      access: 'read',
      other: 1,
    });
  });
});
