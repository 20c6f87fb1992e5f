/**
 * Reading the JSON Schemas of the API's OpenAPI document as TypeScript type
 * text. Both generated artifacts use it (the client's types in
 * src/client/apiTypes.ts and docs/API.md), so the documentation shows each
 * field with exactly the type the client declares.
 *
 * It covers the subset of JSON Schema the document uses (objects, arrays,
 * enums, consts, `anyOf`, `$ref`, the scalar types) and reads anything else
 * as `unknown`, which is what an empty schema (`{}`, any JSON) means.
 */

export type Schema = Readonly<Record<string, unknown>>;

const COMPONENT_REF = "#/components/schemas/";

/** Component names that would shadow a TypeScript global. */
const RENAMED: Readonly<Record<string, string>> = { Error: "ErrorBody" };

/** The TypeScript name of a component schema. */
export function typeName(component: string): string {
  return RENAMED[component] ?? component;
}

export function schemaAt(value: unknown): Schema {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Schema) : {};
}

export function propertiesOf(schema: Schema): [string, Schema][] {
  return Object.entries(schemaAt(schema.properties)).map(([name, property]) => [name, schemaAt(property)]);
}

export function requiredOf(schema: Schema): ReadonlySet<string> {
  return new Set(Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === "string") : []);
}

/**
 * The schema followed by the members of its `anyOf`, theirs in turn: a
 * nullable field (`anyOf: [{…}, {type: "null"}]`) carries its description,
 * format and bounds on the non-null member, and a generator reading only the
 * field's own keys would drop them.
 */
export function unionParts(schema: Schema): Schema[] {
  const members = Array.isArray(schema.anyOf) ? schema.anyOf.map(schemaAt) : [];
  return [schema, ...members.flatMap(unionParts)];
}

/** An object schema that lists its fields (rather than a free-form map). */
export function hasProperties(schema: Schema): boolean {
  return propertiesOf(schema).length > 0;
}

/**
 * `#/components/schemas/Error/properties/error` → `ErrorBody["error"]`: a
 * pointer into a component becomes an indexed access type, so the generated
 * types keep the document's sharing instead of copying the shape.
 */
export function refTypeText(ref: string): string {
  if (!ref.startsWith(COMPONENT_REF)) throw new Error(`unsupported $ref ${ref}: only #/components/schemas/… is read`);
  const [component, ...path] = ref.slice(COMPONENT_REF.length).split("/");
  let text = typeName(component!);
  for (let i = 0; i < path.length; i++) {
    if (path[i] === "properties" && path[i + 1] !== undefined) text += `[${JSON.stringify(path[++i])}]`;
    else if (path[i] === "items") text += "[number]";
    else throw new Error(`unsupported $ref ${ref}`);
  }
  return text;
}

/**
 * The TypeScript type of `schema`. Objects with properties are written out
 * over several lines, each line after the first prefixed with `indent`, with
 * each property's description as a doc comment.
 */
export function typeText(schema: Schema, indent = ""): string {
  if (typeof schema.$ref === "string") return refTypeText(schema.$ref);
  if ("const" in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map((member) => typeText(schemaAt(member), indent)).join(" | ");
  switch (schema.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const items = typeText(schemaAt(schema.items), indent);
      return /^[\w."[\]]+$/.test(items) ? `readonly ${items}[]` : `readonly (${items})[]`;
    }
    case "object":
      return objectTypeText(schema, indent);
    default:
      return "unknown";
  }
}

function objectTypeText(schema: Schema, indent: string): string {
  if (!hasProperties(schema)) {
    const values = schema.additionalProperties;
    const valueType = values !== null && typeof values === "object" ? typeText(schemaAt(values), indent) : "unknown";
    return `Record<string, ${valueType}>`;
  }
  const required = requiredOf(schema);
  const inner = `${indent}  `;
  const lines = ["{"];
  for (const [name, property] of propertiesOf(schema)) {
    lines.push(...docComment(property, inner));
    const key = /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
    lines.push(`${inner}${key}${required.has(name) ? "" : "?"}: ${typeText(property, inner)};`);
  }
  lines.push(`${indent}}`);
  return lines.join("\n");
}

/** The descriptions and default of the schema and its union's members as a doc comment, or no lines when they have none. */
export function docComment(schema: Schema, indent: string): string[] {
  const text: string[] = [];
  const parts = unionParts(schema);
  for (const part of parts) if (typeof part.description === "string") text.push(...part.description.split("\n"));
  const withDefault = parts.find((part) => "default" in part);
  if (withDefault !== undefined) text.push(`@default ${JSON.stringify(withDefault.default)}`);
  if (text.length === 0) return [];
  const safe = text.map((line) => line.replaceAll("*/", "*\\/"));
  if (safe.length === 1) return [`${indent}/** ${safe[0]} */`];
  return [`${indent}/**`, ...safe.map((line) => `${indent} * ${line}`), `${indent} */`];
}
