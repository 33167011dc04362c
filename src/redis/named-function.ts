import { CallHeader, callArgs, NamedArgs } from './function-args';
import type { FunctionDefinition } from './function-library';
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
  'contract' | 'build' | 'decode'
> {
  args: Args;
  reply: readonly Field[];
  build(input: In): NamedCall<Args>;
  decode(reply: NamedReply<Field>, input: In): Out;
}

/** Declares a function of the named contract (see NamedFunctionSpec) as a FunctionDefinition. */
export function namedFunction<In, Out, const Args extends readonly string[], const Field extends string>(
  spec: NamedFunctionSpec<In, Out, Args, Field>,
): FunctionDefinition<In, Out> {
  const { args, reply, build, decode, ...definition } = spec;
  return {
    ...definition,
    contract: { args, reply },
    build: (input) => {
      const call = build(input);
      return { keys: call.keys, args: callArgs(call.header, args, call.args) };
    },
    decode: (raw, input) => decode(new NamedReply(spec.name, reply, raw), input),
  };
}
