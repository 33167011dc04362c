import { Body, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { ErrorResponse, RedisBackedController } from '../edge/route-decorators';
import { AdminDelete, AdminRead, AdminRoute } from './access.decorators';
import { ApiKeysService } from './api-keys.service';
import { ApiKeyListDto, ApiKeyParams, CreateApiKeyDto, CreatedApiKeyDto } from './dto/api-key.dto';

@RedisBackedController('access', 'admin/keys')
export class AccessController {
  constructor(private readonly keys: ApiKeysService) {}

  @Post()
  @AdminRoute()
  @ApiOperation({
    summary: 'Make an API key',
    description:
      'The answer holds the secret once; only its digest is stored. Every instance accepts the key within API_KEYS_REFRESH_MS (this one at once).',
  })
  @ApiResponse({ status: 201, type: CreatedApiKeyDto })
  @ErrorResponse(409, 'API_KEY_EXISTS, API_KEYS_FULL')
  create(@Body() body: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    return this.keys.create(body.name, body.scopes, body.prefixes ?? []);
  }

  @AdminRead('', { summary: 'List API keys (configured and stored), never their secrets' }, ApiKeyListDto)
  async list(): Promise<ApiKeyListDto> {
    return { keys: await this.keys.list() };
  }

  @AdminDelete(
    ':name',
    {
      summary: 'Revoke a stored API key',
      description: 'Refused here at once, on every other instance within API_KEYS_REFRESH_MS.',
    },
    'API_KEY_NOT_FOUND',
    'Revoked',
  )
  async delete(@Param() params: ApiKeyParams): Promise<void> {
    await this.keys.delete(params.name);
  }
}
