import type { BoundFunctions, FunctionDefinition, FunctionLibrary } from '../../redis/function-library';

/** A slice's function definitions (its `<SLICE>_FUNCTIONS`). */
type Definitions = Record<string, FunctionDefinition<never, unknown>>;

/** A library holding (at least) the functions `F`, bound: what defineLibrary answers. */
export interface BoundLibrary<F extends Definitions> {
  library: FunctionLibrary;
  functions: BoundFunctions<F>;
}

/**
 * The class of one slice's part of tb_ranking. The one library is assembled above the slices from
 * all of their definitions (ranking.functions.ts), so a slice cannot import it without an import
 * running up the wing: instead RankingCoreModule builds each slice's part from it and injects it,
 * the class being the token. `functions` holds the slice's own functions only; `library` is what its
 * store defines on RedisFunctions (loaded once per node, whichever store defines it first).
 */
export function sliceFunctions<F extends Definitions>(definitions: F) {
  return class SliceFunctions {
    static readonly definitions = definitions;
    readonly library: FunctionLibrary;
    readonly functions: BoundFunctions<F>;

    constructor(bound: BoundLibrary<F>) {
      this.library = bound.library;
      // The slice's own keys only: a store reaches no other slice's function through its part.
      this.functions = Object.fromEntries(
        Object.keys(definitions).map((key) => [key, bound.functions[key]]),
      ) as BoundFunctions<F>;
    }
  };
}
