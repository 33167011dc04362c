import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';

const messagesOf = (errors: ValidationError[]): string[] =>
  errors.flatMap((error) => [...Object.values(error.constraints ?? {}), ...messagesOf(error.children ?? [])]);

/** The messages class-validator answers for `body` read as a `Dto`, its nested fields' included. */
export function dtoErrorsOf(Dto: new () => object, body: object): string[] {
  return messagesOf(validateSync(plainToInstance(Dto, body)));
}

/**
 * The messages for a body of a DTO holding only `field` under `decorator`, as a board or window DTO
 * declares it: how an option's spec checks its own field.
 */
export function fieldErrorsOf(field: string, decorator: PropertyDecorator): (body: object) => string[] {
  class FieldDto {}
  decorator(FieldDto.prototype, field);
  return (body) => dtoErrorsOf(FieldDto, body);
}
