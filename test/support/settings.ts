/**
 * The refusal every settings class owes (common/settings.ts validateSettings): for each [variable,
 * value], an environment holding only that value fails validation with a message naming the variable.
 */
export function itRefusesEach(
  validate: (env: Record<string, unknown>) => unknown,
  cases: Array<[string, string]>,
): void {
  it.each(cases)('refuses %s=%j with a message naming the variable', (name, value) => {
    expect(() => validate({ [name]: value })).toThrow(new RegExp(`Invalid configuration:[\\s\\S]*${name}`));
  });
}

/**
 * The defaults every settings class documents: an empty environment validates to `defaults` (and
 * leaves each of `unset` undefined).
 */
export function itGivesDefaults(
  validate: (env: Record<string, unknown>) => object,
  defaults: Record<string, unknown>,
  unset: string[] = [],
): void {
  it('gives the documented defaults for an empty environment', () => {
    const settings = validate({}) as Record<string, unknown>;
    expect(settings).toMatchObject(defaults);
    for (const name of unset) expect(settings[name]).toBeUndefined();
  });
}
