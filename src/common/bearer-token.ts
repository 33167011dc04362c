import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * A configured secret checked against `Authorization: Bearer <token>`. Both sides are compared as
 * SHA-256 digests, so the comparison takes the same time whatever the lengths and wherever they differ.
 */
export class BearerToken {
  private readonly expectedDigest: Buffer;

  constructor(token: string) {
    this.expectedDigest = digest(token);
  }

  /** 'missing' when the header is absent or not a Bearer one, 'wrong' when the token differs. */
  check(header: string | string[] | undefined): 'ok' | 'missing' | 'wrong' {
    const match = typeof header === 'string' ? /^Bearer (.+)$/i.exec(header) : null;
    if (!match) return 'missing';
    return this.matches(match[1]) ? 'ok' : 'wrong';
  }

  /** Whether a presented secret is this token. */
  matches(secret: string): boolean {
    return timingSafeEqual(digest(secret), this.expectedDigest);
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
