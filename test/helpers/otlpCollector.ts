/**
 * A stand-in OpenTelemetry collector: a real HTTP server taking OTLP/HTTP
 * trace exports (`POST /v1/traces`, protobuf, gzip or not) the way a
 * collector does, decoding them with the OTLP schema (otlpTrace.proto beside
 * this file, the parts of opentelemetry-proto a trace export uses) and
 * keeping every span it received.
 */
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import protobuf from "protobufjs";

export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a span that starts its trace. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  /** The exporting process's `service.name`. */
  readonly service: string;
  readonly scope: string;
}

export interface OtlpCollector {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  readonly url: string;
  readonly spans: readonly ReceivedSpan[];
  /** Export requests received, spans or not. */
  readonly exports: number;
  close(): Promise<void>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

const root = protobuf.parse(readFileSync(new URL("./otlpTrace.proto", import.meta.url), "utf8")).root;
const ExportTraceServiceRequest = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");

interface KeyValue {
  key: string;
  value?: { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number };
}

function attributesOf(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    const scalar = value?.stringValue ?? value?.boolValue ?? value?.doubleValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
    if (scalar !== undefined) attributes[key] = scalar;
  }
  return attributes;
}

const hex = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? []).toString("hex");

export async function startOtlpCollector(): Promise<OtlpCollector> {
  const spans: ReceivedSpan[] = [];
  let exports = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end();
        return;
      }
      exports++;
      const raw = Buffer.concat(chunks);
      const body = request.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
      const decoded = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), { longs: String, defaults: false }) as {
        resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { scope?: { name?: string }; spans?: Record<string, unknown>[] }[] }[];
      };
      for (const resourceSpans of decoded.resourceSpans ?? []) {
        const service = String(attributesOf(resourceSpans.resource?.attributes)["service.name"] ?? "");
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            spans.push({
              traceId: hex(span.traceId as Uint8Array),
              spanId: hex(span.spanId as Uint8Array),
              parentSpanId: hex(span.parentSpanId as Uint8Array | undefined),
              name: String(span.name),
              kind: Number(span.kind ?? 0),
              attributes: attributesOf(span.attributes as KeyValue[] | undefined),
              service,
              scope: scopeSpans.scope?.name ?? "",
            });
          }
        }
      }
      // An empty ExportTraceServiceResponse: everything accepted.
      response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    get exports() {
      return exports;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
