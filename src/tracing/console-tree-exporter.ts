import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-node';

type ExportDone = Parameters<SpanExporter['export']>[1];
/** ExportResultCode.SUCCESS of @opentelemetry/core, which this service does not depend on directly. */
const EXPORT_SUCCESS = 0;

/** Traces whose local root has not ended yet, most kept: older ones are printed as they stand. */
const MAX_OPEN_TRACES = 1000;

/**
 * OTEL_TRACES_EXPORTER=console: each trace printed as a tree once its local root span ends (a
 * request's span, with its Redis calls under it), one line per span: name, duration in ms, the
 * attributes a reader looks for, and its links. The SDK's own console exporter prints one object per
 * span, in the order they end, which no one can read as a request.
 */
export class ConsoleTreeExporter implements SpanExporter {
  private readonly open = new Map<string, ReadableSpan[]>();

  constructor(private readonly write: (text: string) => void = (text) => void process.stdout.write(text)) {}

  export(spans: ReadableSpan[], done: ExportDone): void {
    for (const span of spans) {
      const traceId = span.spanContext().traceId;
      const gathered = this.open.get(traceId) ?? [];
      gathered.push(span);
      this.open.set(traceId, gathered);
      if (isLocalRoot(span)) this.print(traceId);
    }
    while (this.open.size > MAX_OPEN_TRACES) this.print(this.open.keys().next().value!);
    done({ code: EXPORT_SUCCESS });
  }

  shutdown(): Promise<void> {
    for (const traceId of [...this.open.keys()]) this.print(traceId);
    return Promise.resolve();
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  private print(traceId: string): void {
    const spans = this.open.get(traceId) ?? [];
    this.open.delete(traceId);
    this.write(`trace ${traceId}\n${renderTree(spans)}`);
  }
}

function isLocalRoot(span: ReadableSpan): boolean {
  return span.parentSpanContext === undefined || span.parentSpanContext.isRemote === true;
}

/** The spans as an indented tree, each child under its parent in start order; orphans at the top. */
export function renderTree(spans: ReadableSpan[]): string {
  const ids = new Set(spans.map((span) => span.spanContext().spanId));
  const children = new Map<string | undefined, ReadableSpan[]>();
  for (const span of [...spans].sort((a, b) => compareTimes(a.startTime, b.startTime))) {
    const parentId = span.parentSpanContext?.spanId;
    const key = parentId !== undefined && ids.has(parentId) ? parentId : undefined;
    children.set(key, [...(children.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parentId: string | undefined, depth: number): void => {
    for (const span of children.get(parentId) ?? []) {
      lines.push(`${'  '.repeat(depth + 1)}${describeSpan(span)}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return `${lines.join('\n')}\n`;
}

function describeSpan(span: ReadableSpan): string {
  const durationMs = span.duration[0] * 1e3 + span.duration[1] / 1e6;
  const attributes = Object.entries(span.attributes)
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(' ');
  const links = span.links.map((link) => ` → link ${link.context.traceId}/${link.context.spanId}`).join('');
  const error = span.status.code === SpanStatusCode.ERROR ? ' ERROR' : '';
  return `${span.name}  ${durationMs.toFixed(2)} ms${error}  [span ${span.spanContext().spanId}] ${attributes}${links}`;
}

function compareTimes(a: [number, number], b: [number, number]): number {
  return a[0] - b[0] || a[1] - b[1];
}
