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
