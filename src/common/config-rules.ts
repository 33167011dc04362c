/** The rules of AppConfig's settings that take more than a decorator, and how some are read. */

export function isPrecisionList(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const parts = value.split(',').map((part) => part.trim());
  if (!parts.every((part) => /^[1-9][0-9]{0,7}$/.test(part) && Number(part) <= 31_536_000)) return false;
  return new Set(parts.map(Number)).size === parts.length;
}
