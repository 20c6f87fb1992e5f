/**
 * Writes docs/API.md from the API's OpenAPI document (docs/openapi.json, the
 * document `GET /openapi.json` serves). test/docs/apiDoc.test.ts regenerates
 * it on every run and fails when the committed file differs, so the
 * reference cannot drift from the contract.
 *
 * Field types are shown as the client declares them (openapiSchema.ts is
 * shared with the generator of src/client/apiTypes.ts, which only renames
 * `Error` to `ErrorBody`); nested objects are flattened into `parent.child`
 * rows so every field is one table row.
 */
import { hasProperties, propertiesOf, requiredOf, schemaAt, typeText, unionParts, type Schema } from "./openapiSchema.js";

export const API_DOC_REGENERATE = "npx vitest run test/docs/apiDoc.test.ts -u";

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

export function openapiToMarkdown(document: Schema): string {
  const info = schemaAt(document.info);
  const components = schemaAt(schemaAt(document.components).schemas);
  const bearer = schemaAt(schemaAt(schemaAt(document.components).securitySchemes).bearer);
  const operations = operationsOf(document);
  const out: string[] = [
    "# compactd HTTP API",
    "",
    `<!-- Generated from docs/openapi.json by scripts/openapiToMarkdown.ts. Do not edit; run \`${API_DOC_REGENERATE}\`. -->`,
    "",
    String(info.description ?? ""),
    "",
    joinSentences([
      `Version ${String(info.version)}`,
      "Every endpoint not marked *no auth* takes `Authorization: Bearer <key>`",
      String(bearer.description ?? ""),
      "Request bodies are JSON in UTF-8 (`content-type: application/json`, with no charset or `charset=utf-8`: another charset is refused with 415, bytes that are not UTF-8 with 400), a leading byte-order mark allowed",
      "Every error answers with an [`Error`](#error) body, those refused before any route too: 414 `uri_too_long` for a URL over 2048 characters, 431 `headers_too_large` for a request line and headers over Node's limit (16 KiB), 400 `invalid_url` for a URL the router cannot read (a %-escape in its path that does not decode, or an absolute-form `http://host/…` target whose host or port is malformed), 400 `bad_request` for bytes that are not HTTP, 408 `request_timeout` for a request whose line and headers have not all arrived within 60 s (Node's limit; a body has none)",
      "The machine-readable contract is [openapi.json](openapi.json), also served at `GET /openapi.json`",
    ]),
    "",
    "## Endpoints",
    "",
    "| Method | Path | Summary |",
    "|---|---|---|",
    ...operations.map(({ method, path, operation }) => `| \`${method.toUpperCase()}\` | [\`${path}\`](#${slug(`${method} ${path}`)}) | ${cell(String(operation.summary ?? ""))} |`),
  ];
  for (const { method, path, operation } of operations) out.push("", ...operationSection(method, path, operation));
  out.push("", "## Schemas");
  for (const [name, value] of Object.entries(components)) out.push("", ...schemaSection(name, schemaAt(value)));
  return `${out.join("\n")}\n`;
}

interface Operation {
  readonly method: string;
  readonly path: string;
  readonly operation: Schema;
}

function operationsOf(document: Schema): Operation[] {
  return Object.entries(schemaAt(document.paths)).flatMap(([path, item]) =>
    METHODS.filter((method) => method in schemaAt(item)).map((method) => ({ method, path, operation: schemaAt(schemaAt(item)[method]) })),
  );
}

function operationSection(method: string, path: string, operation: Schema): string[] {
  const noAuth = Array.isArray(operation.security) && operation.security.length === 0;
  const out = [`### \`${method.toUpperCase()} ${path}\``, "", `${String(operation.summary ?? "")}.${noAuth ? " *No auth.*" : ""}`];
  const parameters = Array.isArray(operation.parameters) ? operation.parameters.map(schemaAt) : [];
  if (parameters.length > 0) {
    out.push("", "| Parameter | In | Type | Required | Description |", "|---|---|---|---|---|");
    for (const parameter of parameters) {
      const schema = schemaAt(parameter.schema);
      const description = joinSentences([String(parameter.description ?? ""), notes(schema)]);
      out.push(`| \`${String(parameter.name)}\` | ${String(parameter.in)} | ${cell(docType(schema))} | ${parameter.required === true ? "yes" : "no"} | ${cell(description)} |`);
    }
  }
  const body = schemaAt(schemaAt(schemaAt(schemaAt(operation.requestBody).content)["application/json"]).schema);
  if (Object.keys(body).length > 0) out.push("", `Request body: ${docType(body)}.`);
  out.push("", "| Status | Body | Description |", "|---|---|---|");
  for (const [status, value] of Object.entries(schemaAt(operation.responses))) {
    const response = schemaAt(value);
    const content = schemaAt(response.content);
    const [mediaType, media] = Object.entries(content)[0] ?? [];
    const bodyType = media === undefined ? "" : mediaType === "application/json" ? docType(schemaAt(schemaAt(media).schema)) : `\`${mediaType}\``;
    const headers = Object.entries(schemaAt(response.headers)).map(([name, header]) => {
      const schema = schemaAt(schemaAt(header).schema);
      return `Header \`${name}\`${"const" in schema ? `: \`${JSON.stringify(schema.const)}\`` : ""}.`;
    });
    out.push(`| ${status} | ${cell(bodyType)} | ${cell(joinSentences([String(response.description ?? ""), ...headers]))} |`);
  }
  return out;
}

function schemaSection(name: string, schema: Schema): string[] {
  const out = [`### ${name}`];
  if (typeof schema.description === "string") out.push("", schema.description);
  const rows = fieldRows(schema, "");
  if (rows.length > 0) out.push("", "| Field | Type | Required | Description |", "|---|---|---|---|", ...rows);
  else out.push("", `Type: ${docType(schema)}.`);
  return out;
}

/** One row per field, nested objects (also inside arrays and nullable unions) flattened under their parent's path. */
function fieldRows(schema: Schema, prefix: string): string[] {
  const required = requiredOf(schema);
  return propertiesOf(schema).flatMap(([name, property]) => {
    const path = `${prefix}${name}`;
    const description = notes(property);
    const row = `| \`${path}\` | ${cell(docType(property))} | ${required.has(name) ? "yes" : "no"} | ${cell(description)} |`;
    const nested = nestedObject(property);
    return [row, ...(nested === undefined ? [] : fieldRows(nested.schema, `${path}${nested.suffix}`))];
  });
}

function nestedObject(schema: Schema): { schema: Schema; suffix: string } | undefined {
  if (hasProperties(schema)) return { schema, suffix: "." };
  if (schema.type === "array" && hasProperties(schemaAt(schema.items))) return { schema: schemaAt(schema.items), suffix: "[]." };
  const members = Array.isArray(schema.anyOf) ? schema.anyOf.map(schemaAt) : [];
  const object = members.find(hasProperties);
  return object === undefined ? undefined : { schema: object, suffix: "." };
}

/** The type as the client declares it, with links to the schemas it names. */
function docType(schema: Schema): string {
  if (typeof schema.$ref === "string") {
    const [component, ...rest] = schema.$ref.replace("#/components/schemas/", "").split("/");
    const field = rest.filter((segment) => segment !== "properties").join(".");
    return `[\`${component!}${field === "" ? "" : `.${field}`}\`](#${slug(component!)})`;
  }
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map((member) => docType(schemaAt(member))).join(" or ");
  if (hasProperties(schema)) return "`object`";
  if (schema.type === "array") return `array of ${docType(schemaAt(schema.items))}`;
  return `\`${typeText(schema)}\``;
}

/** A field's descriptions and constraints, its union members' included (a nullable field keeps them there). */
function notes(schema: Schema): string {
  return joinSentences(unionParts(schema).flatMap((part) => [String(part.description ?? ""), constraints(part)]));
}

function constraints(schema: Schema): string {
  const notes: string[] = [];
  const range = (low: unknown, high: unknown, unit: string): void => {
    if (typeof low === "number" && typeof high === "number") notes.push(`${low}–${high}${unit}`);
    else if (typeof low === "number") notes.push(`At least ${low}${unit}`);
    else if (typeof high === "number") notes.push(`At most ${high}${unit}`);
  };
  range(schema.minimum, schema.maximum, "");
  range(schema.minLength, schema.maxLength, " characters");
  range(schema.minItems, schema.maxItems, " items");
  if (schema.type === "integer") notes.push("Integer");
  if (schema.format === "date-time") notes.push("ISO 8601 date-time");
  if (typeof schema.pattern === "string") notes.push(`Pattern \`${schema.pattern}\``);
  if ("default" in schema) notes.push(`Default \`${JSON.stringify(schema.default)}\``);
  if (schema.additionalProperties === false) notes.push("No other fields");
  return joinSentences(notes);
}

function joinSentences(parts: readonly string[]): string {
  return parts
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => (/[.!?)]$/.test(part) ? part : `${part}.`))
    .join(" ");
}

/** Text safe inside a table cell. */
function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replaceAll(" ", "-");
}
