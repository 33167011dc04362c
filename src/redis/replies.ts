/** A script answered something its decoder does not expect: a bug, never the client's fault. */
export class ScriptReplyError extends Error {
  constructor(script: string, problem: string) {
    super(`script ${script} replied with an unexpected shape: ${problem}`);
    this.name = 'ScriptReplyError';
  }
}

/**
 * Checked reading of a script's array reply: each accessor names the script and position on a
 * mismatch. Lua numbers arrive as integers, strings as strings.
 */
export class Reply {
  private readonly items: readonly unknown[];

  constructor(
    readonly script: string,
    reply: unknown,
  ) {
    if (!Array.isArray(reply)) throw new ScriptReplyError(script, `expected an array, got ${describe(reply)}`);
    this.items = reply;
  }

  get length(): number {
    return this.items.length;
  }

  /** Throws unless the reply has `length` entries (or at least `length` with `orMore`). */
  expectLength(length: number, orMore = false): this {
    if (orMore ? this.items.length < length : this.items.length !== length) {
      throw new ScriptReplyError(
        this.script,
        `expected ${orMore ? 'at least ' : ''}${length} entries, got ${this.items.length}`,
      );
    }
    return this;
  }

  /** Throws unless the entries from `first` on come in pairs. */
  expectPairsFrom(first: number): this {
    if (this.items.length < first || (this.items.length - first) % 2 !== 0) {
      throw new ScriptReplyError(this.script, `expected pairs from entry ${first}, got ${this.items.length} entries`);
    }
    return this;
  }

  int(index: number): number {
    const value = this.items[index];
    if (typeof value !== 'number' || !Number.isInteger(value)) throw this.mismatch(index, 'an integer');
    return value;
  }

  flag(index: number): boolean {
    const value = this.int(index);
    if (value !== 0 && value !== 1) throw this.mismatch(index, '0 or 1');
    return value === 1;
  }

  string(index: number): string {
    const value = this.items[index];
    if (typeof value !== 'string') throw this.mismatch(index, 'a string');
    return value;
  }

  /** Entry `index` as it came, unchecked: for a decoder's fast path that leaves any other shape to the checked accessors. */
  entry(index: number): unknown {
    return this.items[index];
  }

  /** Whether entry `index` is a string: how a decoder tells two shapes of a reply apart. */
  isString(index: number): boolean {
    return typeof this.items[index] === 'string';
  }

  /** A string, or null where the script answered false (a missing hash field of HMGET). */
  optionalString(index: number): string | null {
    const value = this.items[index];
    if (value === null) return null;
    if (typeof value !== 'string') throw this.mismatch(index, 'a string or null');
    return value;
  }

  /** A number sent as a Lua number or as a numeric string (floats cross as strings). */
  number(index: number): number {
    const value = this.items[index];
    const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    if (typeof parsed !== 'number' || Number.isNaN(parsed)) throw this.mismatch(index, 'a number');
    return parsed;
  }

  /** A nested array reply. */
  nested(index: number): Reply {
    const value = this.items[index];
    if (!Array.isArray(value)) throw this.mismatch(index, 'an array');
    return new Reply(`${this.script}[${index}]`, value);
  }

  /** Integers from `first` to the end. */
  intsFrom(first: number): number[] {
    const values: number[] = [];
    for (let i = first; i < this.items.length; i++) values.push(this.int(i));
    return values;
  }

  /** The entries from `first` on, as a reply of their own (positions count from there). */
  from(first: number): Reply {
    return new Reply(this.script, this.items.slice(first));
  }

  /** `count` entries from `first` on, as a reply of their own; throws when the reply ends before. */
  range(first: number, count: number): Reply {
    if (count < 0 || first + count > this.items.length) {
      throw new ScriptReplyError(
        this.script,
        `expected ${count} entries from entry ${first}, got ${Math.max(this.items.length - first, 0)}`,
      );
    }
    return new Reply(`${this.script}[${first}..]`, this.items.slice(first, first + count));
  }

  /**
   * The reply as consecutive records of `fields` (a listing's rows: item, score, ...), each read by
   * name and named `<script>[<record>]`; throws unless the entries come in whole records.
   */
  records<Field extends string>(fields: readonly Field[]): NamedReply<Field>[] {
    const count = this.wholeRows(fields.length);
    const records: NamedReply<Field>[] = [];
    for (let i = 0; i < count; i++) records.push(new NamedReply(this.script, fields, this.items, i));
    return records;
  }

  /** The reply as consecutive rows of `width` entries, each a Reply of its own; throws unless they are whole. */
  rows(width: number): Reply[] {
    return Array.from({ length: this.wholeRows(width) }, (_, i) => this.range(i * width, width));
  }

  /** The leading entries read by the names `fields` (more may follow); throws when the reply is shorter. */
  head<Field extends string>(fields: readonly Field[]): NamedReply<Field> {
    this.expectLength(fields.length, true);
    return new NamedReply(this.script, fields, this.items, 'head');
  }

  /** The leading entries read by the names `fields`, and the entries after them as a Reply named `<script>.<rest>`. */
  headed<Field extends string>(fields: readonly Field[], rest: string): { head: NamedReply<Field>; rest: Reply } {
    const { reply, records } = NamedReply.withRecords(this.script, fields, this.items, rest);
    return { head: reply, rest: records };
  }

  /** Every entry, each a string. */
  strings(): string[] {
    return this.items.map((_, i) => this.string(i));
  }

  /** Every entry, each a number (as `number` reads it). */
  numbers(): number[] {
    return this.items.map((_, i) => this.number(i));
  }

  /** This reply read by the field names of a named contract (NamedReply). */
  named<Field extends string>(fields: readonly Field[]): NamedReply<Field> {
    return new NamedReply(this.script, fields, this.items);
  }

  /** How many rows of `width` entries the reply is; throws unless they are whole. */
  private wholeRows(width: number): number {
    if (width < 1 || this.items.length % width !== 0) {
      throw new ScriptReplyError(this.script, `expected rows of ${width} entries, got ${this.items.length} entries`);
    }
    return this.items.length / width;
  }

  /** An error naming this reply's entry `index` and what was expected there. */
  unexpected(index: number, expected: string): ScriptReplyError {
    return this.mismatch(index, expected);
  }

  private mismatch(index: number, expected: string): ScriptReplyError {
    return new ScriptReplyError(
      this.script,
      `entry ${index}: expected ${expected}, got ${describe(this.items[index])}`,
    );
  }
}

/**
 * Checked reading of a named call's reply (reader.answer in src/redis/functions/args.lua) by the field
 * names of its contract: a field the contract does not name, or a reply of another length than its
 * fields, is an error naming the function and the fields.
 */
export class NamedReply<Field extends string> {
  private readonly items: readonly unknown[];
  /** Where its fields start in `items`: 0, or a record's first entry (Reply.records). */
  private readonly at: number;

  /**
   * `record`: not a whole reply but the index of a record of `raw`'s records of `fields` (Reply.records
   * checked them whole), or `head`, its first entries (Reply.head checked it holds them).
   */
  constructor(
    private readonly name: string,
    private readonly fields: readonly Field[],
    raw: unknown,
    private readonly record?: number | 'head',
  ) {
    if (!Array.isArray(raw)) throw new ScriptReplyError(name, `expected an array, got ${describe(raw)}`);
    this.items = raw;
    this.at = typeof record === 'number' ? record * fields.length : 0;
    if (record === undefined && this.items.length !== fields.length) {
      const missing = fields.slice(this.items.length).join(', ');
      throw new ScriptReplyError(
        name,
        `expected the fields ${fields.join(', ')}, got ${this.items.length} entries${missing ? ` (missing ${missing})` : ''}`,
      );
    }
  }

  /** The script and, for a record, its index (`<script>[<record>]`): what a mismatch names. */
  get script(): string {
    return typeof this.record === 'number' ? `${this.name}[${this.record}]` : this.name;
  }

  /**
   * A reply of the named fields, then records after them (reader.answer's `records`): the fields as a
   * NamedReply, the records as a Reply named `<script>.<records>`.
   */
  static withRecords<Field extends string>(
    script: string,
    fields: readonly Field[],
    raw: unknown,
    records: string,
  ): { reply: NamedReply<Field>; records: Reply } {
    new Reply(script, raw).expectLength(fields.length, true);
    const items = raw as unknown[];
    return {
      reply: new NamedReply(script, fields, items.slice(0, fields.length)),
      records: new Reply(`${script}.${records}`, items.slice(fields.length)),
    };
  }

  // A well-shaped field is answered as it is: the one-entry Reply that names it is built only to word a mismatch.
  int(field: Field): number {
    const value = this.items[this.at + this.indexOf(field)];
    return typeof value === 'number' && Number.isInteger(value) ? value : this.field(field).int(0);
  }

  flag(field: Field): boolean {
    const value = this.items[this.at + this.indexOf(field)];
    return value === 0 || value === 1 ? value === 1 : this.field(field).flag(0);
  }

  /** A number sent as a Lua number or as a numeric string (floats cross as strings), as Reply.number reads it. */
  number(field: Field): number {
    const value = this.items[this.at + this.indexOf(field)];
    const parsed = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
    return typeof parsed === 'number' && !Number.isNaN(parsed) ? parsed : this.field(field).number(0);
  }

  string(field: Field): string {
    const value = this.items[this.at + this.indexOf(field)];
    return typeof value === 'string' ? value : this.field(field).string(0);
  }

  /**
   * A list of integers answered as one field (board_write_lib's `joined`): one integer as it is,
   * several joined by commas.
   */
  ints(field: Field): number[] {
    const value = this.items[this.at + this.indexOf(field)];
    if (typeof value === 'number') return [this.int(field)];
    const parts = this.string(field).split(',');
    const reply = new Reply(`${this.script}.${field}`, parts.map(Number));
    return parts.map((_, i) => reply.int(i));
  }

  /** Whether the field is a string (how a decoder tells an answer's shapes apart). */
  isString(field: Field): boolean {
    return typeof this.items[this.at + this.indexOf(field)] === 'string';
  }

  /** A nested array field, as a Reply named `<script>.<field>`. */
  nested(field: Field): Reply {
    const value = this.items[this.at + this.indexOf(field)];
    if (!Array.isArray(value)) throw this.field(field).unexpected(0, 'an array');
    return new Reply(`${this.script}.${field}`, value);
  }

  /** The field as a one-entry Reply named `<script>.<field>`, so a mismatch names the field. */
  private field(field: Field): Reply {
    return new Reply(`${this.script}.${field}`, [this.items[this.at + this.indexOf(field)]]);
  }

  private indexOf(field: Field): number {
    const index = this.fields.indexOf(field);
    if (index < 0)
      throw new ScriptReplyError(this.script, `no field "${field}" (its fields: ${this.fields.join(', ')})`);
    return index;
  }
}

/** A reply that is a single value. */
export function intReply(script: string, reply: unknown): number {
  if (typeof reply !== 'number' || !Number.isInteger(reply)) {
    throw new ScriptReplyError(script, `expected an integer, got ${describe(reply)}`);
  }
  return reply;
}

export function flagReply(script: string, reply: unknown): boolean {
  const value = intReply(script, reply);
  if (value !== 0 && value !== 1) throw new ScriptReplyError(script, `expected 0 or 1, got ${value}`);
  return value === 1;
}

export function oneOfReply<T extends string>(script: string, reply: unknown, allowed: readonly T[]): T {
  const found = allowed.find((value) => value === reply);
  if (found === undefined)
    throw new ScriptReplyError(script, `expected one of ${allowed.join(', ')}, got ${describe(reply)}`);
  return found;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}...` : value}"`;
  return value === null ? 'null' : typeof value === 'number' ? String(value) : typeof value;
}
