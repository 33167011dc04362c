import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsString, Matches } from 'class-validator';
import { IsName, IsOptionalNotNull } from '../../common/dto';
import { NAME_RULE } from '../../common/names';
import { API_KEY_PREFIX_CHARS, API_KEY_PREFIXES } from '../access.limits';
import { PREFIX_PATTERN, Scope, SCOPES } from '../access-rules';

const PREFIX_RULE = `${API_KEY_PREFIX_CHARS.min}-${API_KEY_PREFIX_CHARS.max} printable characters without spaces, "," or "|"`;

export class ApiKeyParams {
  @ApiProperty({ description: `Key name: ${NAME_RULE}`, example: 'ingest-eu' })
  @IsString()
  @IsName()
  name!: string;
}

export class CreateApiKeyDto {
  @ApiProperty({ description: `Key name: ${NAME_RULE}; not starting with "config:"`, example: 'ingest-eu' })
  @IsString()
  @IsName()
  name!: string;

  @ApiProperty({ enum: SCOPES, isArray: true, description: 'What the key may do', example: ['write'] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SCOPES.length)
  @ArrayUnique()
  @IsIn(SCOPES, { each: true })
  scopes!: Scope[];

  @ApiPropertyOptional({
    type: [String],
    description: `Names (board, counter, stats context) the key is limited to start with one of these; absent or empty: any name. Each ${PREFIX_RULE}; at most ${API_KEY_PREFIXES.max}. A limited key cannot list every name (GET /boards, GET /counters).`,
    example: ['eu.'],
  })
  @IsOptionalNotNull()
  @IsArray()
  @ArrayMaxSize(API_KEY_PREFIXES.max)
  @IsString({ each: true })
  @Matches(PREFIX_PATTERN, { each: true, message: `each value in $property must be ${PREFIX_RULE}` })
  prefixes?: string[];
}

export class ApiKeyDto {
  @ApiProperty({ example: 'ingest-eu' }) name!: string;
  @ApiProperty({ enum: SCOPES, isArray: true }) scopes!: Scope[];
  @ApiProperty({ type: [String], description: 'Name prefixes the key is limited to; empty: any name' })
  prefixes!: string[];
  @ApiProperty({ enum: ['config', 'redis'], description: 'From API_KEYS, or made by POST /admin/keys' })
  source!: 'config' | 'redis';
  @ApiPropertyOptional({ type: 'integer', description: 'When the key was made, unix seconds (stored keys)' })
  createdAt?: number;
}

export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({ description: 'The secret: shown this once, never stored (only its SHA-256 digest is)' })
  key!: string;
}

export class ApiKeyListDto {
  @ApiProperty({ type: [ApiKeyDto], description: 'Sorted by name' })
  keys!: ApiKeyDto[];
}
