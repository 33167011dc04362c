import { CallHeader, callArgs, NamedArgs } from './function-args';
import { Declared, type FunctionDefinition, named } from './function-library';
import { decodeIdempotent, IDEM_FIELDS, IdemCall, Idempotent, idemNamedArgs } from './idempotency';
import { NamedReply } from './replies';

/** What a named function's `build` answers: its keys, the common header and a value per argument name. */
export interface NamedCall<Args extends readonly string[]> {
  keys: string[];
  header: CallHeader;
  args: NamedArgs<Args>;
}

/**
 * A function on the named contract, written once: `args` and `reply` are its contract (emitted into
 * the library as CALLS.<handler>), `build` names each argument's value, `decode` reads the reply's
 * fields by name. The argument list and the reply's field list are stated here only, where a
 * typedFunction states each twice more (callArgs, NamedReply).
 */
export interface NamedFunctionSpec<In, Out, Args extends readonly string[], Field extends string> extends Omit<
  FunctionDefinition<In, Out>,
  'name' | 'handler' | 'contract' | 'build' | 'decode'
> {
  /** Stated only where it is not the key's (functionSet). */
  handler?: string;
  args: Args;
  reply: readonly Field[];
  build(input: In): NamedCall<Args>;
  decode(reply: NamedReply<Field>, input: In): Out;
}

/** Declares a function of the named contract (see NamedFunctionSpec) as a FunctionDefinition. */
export function namedFunction<In, Out, const Args extends readonly string[], const Field extends string>(
  spec: NamedFunctionSpec<In, Out, Args, Field>,
): Declared<In, Out> {
  const { args, reply, build, decode, ...definition } = spec;
  return (id) =>
    named(id, {
      ...definition,
      contract: { args, reply },
      build: (input: In) => {
        const call = build(input);
        return { keys: call.keys, args: callArgs(call.header, args, call.args) };
      },
      decode: (raw: unknown, input: In) => decode(new NamedReply(id.name, reply, raw), input),
    });
}

/**
 * A retry-safe write on the named contract: its own `args` followed by idem_lib's (IDEM_FIELDS, from
 * the input's `idem` and the context `build` names, "" unless given), and a reply that is idem_lib's
 * outcome, context and its `created` counts, then the contract's `reply` fields (decodeIdempotent).
 */
export interface IdempotentFunctionSpec<
  In extends { idem?: IdemCall },
  Out,
  Args extends readonly string[],
  Field extends string,
  Made extends string = never,
> extends Omit<FunctionDefinition<In, Idempotent<Out, Made>>, 'name' | 'handler' | 'contract' | 'build' | 'decode'> {
  /** Stated only where it is not the key's (functionSet). */
  handler?: string;
  args: Args;
  reply: readonly Field[];
  /** The names of what an applied write created, counted before the reply's fields (CallContract.created). */
  created?: readonly Made[];
  build(input: In): NamedCall<Args> & { idemContext?: string };
  decode(reply: NamedReply<Field>, input: In): Out;
}

/** Declares a retry-safe function of the named contract (see IdempotentFunctionSpec). */
export function idempotentFunction<
  In extends { idem?: IdemCall },
  Out,
  const Args extends readonly string[],
  const Field extends string,
  const Made extends string = never,
>(spec: IdempotentFunctionSpec<In, Out, Args, Field, Made>): Declared<In, Idempotent<Out, Made>> {
  const { args, reply, created, build, decode, ...definition } = spec;
  const allArgs = [...args, ...IDEM_FIELDS] as const;
  return (id) =>
    named(id, {
      ...definition,
      contract: { args: allArgs, reply, created },
      build: (input: In) => {
        const call = build(input);
        const values = { ...call.args, ...idemNamedArgs(input.idem, call.idemContext ?? '') };
        return { keys: call.keys, args: callArgs(call.header, allArgs, values) };
      },
      decode: (raw: unknown, input: In) =>
        decodeIdempotent(id.name, raw, input.idem, (fields) => decode(fields.named(reply), input), created),
    });
}
