import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { IsName, NameProperty } from '../../common/dto';
import type { NatsDeclaration } from '../sources/nats.source';
import type { RedisStreamDeclaration } from '../sources/redis-stream.source';

export type SourceDeclaration = RedisStreamDeclaration | NatsDeclaration;

export class IngestParams {
  @NameProperty('Source name', 'orders')
  name!: string;
}

/** A Redis key or a NATS subject/stream name: 1-200 printable characters without spaces. */
const KEY_PATTERN = /^[^\s\p{Cc}]{1,200}$/u;
/** NATS stream and durable names: no spaces, dots, wildcards or path separators. */
const NATS_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** `PUT /admin/ingest/:name`: which stream to read and how (shared/api.md, "Wave 3 details"). */
export class DeclareSourceDto {
  @ApiProperty({ enum: ['redis-stream', 'nats'], description: 'Redis Streams or NATS JetStream' })
  @IsIn(['redis-stream', 'nats'])
  kind!: 'redis-stream' | 'nats';

  @ApiProperty({
    description:
      'redis-stream: the stream key (each entry carries the event as JSON in its field `event`); nats: the JetStream stream name',
    example: 'events',
  })
  @IsString()
  @Matches(KEY_PATTERN, { message: 'stream must be 1-200 characters without spaces' })
  stream!: string;

  @ApiPropertyOptional({
    description: "redis-stream: the server holding the stream (default: the service's own Redis)",
    example: 'redis://events-redis:6379',
  })
  @IsOptional()
  @IsString()
  @Matches(/^rediss?:\/\/\S+$/, { message: 'url must look like redis://host:port[/db]' })
  @MaxLength(500)
  url?: string;

  @ApiPropertyOptional({ description: 'redis-stream: the consumer group (default "trendboard")' })
  @IsOptional()
  @IsName()
  group?: string;

  @ApiPropertyOptional({ description: 'nats: comma-separated server URLs', example: 'nats://127.0.0.1:4222' })
  @IsOptional()
  @IsString()
  @Matches(/^(nats|tls):\/\/\S+$/, { message: 'servers must be nats://host:port[,nats://...]' })
  @MaxLength(500)
  servers?: string;

  @ApiPropertyOptional({ description: 'nats: only messages of this subject (default: all the stream holds)' })
  @IsOptional()
  @IsString()
  @Matches(KEY_PATTERN, { message: 'subject must be 1-200 characters without spaces' })
  subject?: string;

  @ApiPropertyOptional({ description: 'nats: the durable consumer (default "trendboard")' })
  @IsOptional()
  @IsString()
  @Matches(NATS_NAME, { message: 'durable must be 1-64 characters of A-Z a-z 0-9 _ -' })
  durable?: string;

  @ApiPropertyOptional({ description: 'Board of messages that name none' })
  @IsOptional()
  @IsName()
  board?: string;

  @ApiPropertyOptional({
    description:
      'redis-stream: dead-letter stream key (default `<stream>:dead`); nats: dead-letter subject (default `trendboard.dead.<stream>`)',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @Matches(KEY_PATTERN, { message: 'deadLetter must be 1-200 characters without spaces' })
  deadLetter?: string;
}

export class SourceStatusDto {
  @ApiProperty({ example: 'orders' }) name!: string;
  @ApiProperty({ description: 'The declaration as sent' }) declaration!: DeclareSourceDto;
  @ApiProperty({ type: 'integer', description: 'When it was declared, unix s' }) declaredAt!: number;
  @ApiProperty({ type: 'integer', description: 'Events applied since declared, over every instance' }) applied!: number;
  @ApiProperty({ type: 'integer', description: 'Messages dead-lettered since declared, over every instance' })
  deadLettered!: number;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Messages not yet applied, as last measured by the consuming instance (null: not yet)',
  })
  lag!: number | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description:
      'Events applied per second over the last second or so, as last measured by the consuming instance (null: not yet)',
  })
  throughput!: number | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'The last failure (connection, Redis), null: none' })
  lastError!: string | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'When lastError happened, unix s' })
  lastErrorAt!: number | null;
  @ApiProperty({ type: 'string', nullable: true, description: 'The instance consuming the source now (null: none)' })
  consumer!: string | null;
}

export class SourceListDto {
  @ApiProperty({ type: [SourceStatusDto] }) sources!: SourceStatusDto[];
}
