import type { FunctionLibrary } from './function-library';
import { FunctionClient, loadLibraries } from './functions';

/** Whether the process's libraries are on Redis: what readiness reports. */
export type LibrariesState = { loaded: true } | { loaded: false; reason: string };

/**
 * The function libraries of one process and whether they are loaded on the Redis it talks to. Loaded
 * at start-up and again whenever the connection comes back (a restarted node without persistence has
 * none); between those, a call that finds its function missing reloads its own library
 * (callFunction). Until a load has succeeded the process is not ready: every call would pay a reload.
 */
export class FunctionLibraries {
  private readonly libraries = new Map<string, FunctionLibrary>();
  private state: LibrariesState = { loaded: false, reason: 'function libraries not loaded yet' };
  /** Loads run one after another: a second one starts after the first (a library may have been added meanwhile). */
  private queue: Promise<unknown> = Promise.resolve();
  private lastStartMs = -Infinity;

  constructor(private readonly client: FunctionClient) {}

  /** Adds libraries (once per name: a second module defining the same one adds nothing). */
  define(libraries: readonly FunctionLibrary[]): void {
    for (const library of libraries) {
      const known = this.libraries.get(library.name);
      if (known && known.source !== library.source) {
        throw new Error(`two function libraries named ${library.name} with different code (a version hash collision)`);
      }
      if (known) continue;
      this.libraries.set(library.name, library);
      this.state = { loaded: false, reason: `function library ${library.name} not loaded yet` };
    }
  }

  get names(): string[] {
    return [...this.libraries.keys()];
  }

  get status(): LibrariesState {
    return this.libraries.size === 0 ? { loaded: true } : this.state;
  }

  /**
   * Loads the libraries unless they are loaded or a load started less than `minIntervalMs` ago: what
   * readiness calls, so a load that failed (a master unreachable at start-up) is tried again while
   * the process is not ready, and a flood of probes sends no flood of FUNCTION LOADs.
   */
  async loadIfMissing(minIntervalMs: number): Promise<LibrariesState> {
    if (this.status.loaded) return this.status;
    if (performance.now() - this.lastStartMs < minIntervalMs) return this.status;
    return this.load();
  }

  /** Loads every library on every master; never throws (the state says what failed). */
  load(): Promise<LibrariesState> {
    this.lastStartMs = performance.now();
    const next = this.queue.then(() => this.loadNow());
    this.queue = next;
    return next;
  }

  private async loadNow(): Promise<LibrariesState> {
    const libraries = [...this.libraries.values()];
    try {
      await loadLibraries(this.client, libraries);
      // Only if nothing was defined meanwhile: a library added during the load is not on Redis yet.
      if (this.libraries.size === libraries.length) this.state = { loaded: true };
    } catch (error) {
      this.state = { loaded: false, reason: error instanceof Error ? error.message : String(error) };
    }
    return this.status;
  }
}
