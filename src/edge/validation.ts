import { ArgumentMetadata, Injectable, ValidationPipe } from '@nestjs/common';
import { compiledCheckOf } from '../common/compiled-checks';

const OPTIONS = {
  whitelist: true,
  forbidNonWhitelisted: true,
  transform: true,
  stopAtFirstError: true,
  forbidUnknownValues: true,
} as const;

/**
 * The one global pipe: unknown fields rejected, payloads transformed into their DTO classes. A DTO with
 * a compiled check (see compiled-checks.ts) skips class-validator for the input that check accepts.
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super(OPTIONS);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const accepted = compiledCheckOf(metadata.metatype)?.(value);
    return accepted ?? super.transform(value, metadata);
  }
}

/** The plain class-validator pipe, with the same options (the reference the compiled checks are tested against). */
export function createReferenceValidationPipe(): ValidationPipe {
  return new ValidationPipe(OPTIONS);
}
