/**
 * Writes src/client/apiTypes.ts from the API's OpenAPI document (docs/openapi.json): one exported
 * type per component schema. test/client/apiTypes.test.ts regenerates it on
 * every run and fails when the committed file differs, so the client's types
 * cannot drift from what the API validates and answers.
 */
import { docComment, hasProperties, schemaAt, typeName, typeText, type Schema } from "./openapiSchema.js";

export const API_TYPES_REGENERATE = "npx vitest run test/client/apiTypes.test.ts -u";

export function openapiToTypeScript(document: Schema): string {
  const components = schemaAt(schemaAt(document.components).schemas);
  const out = [
    "/**",
    " * The request and response bodies of the compactd HTTP API.",
    " *",
    " * Generated from the API's OpenAPI document (docs/openapi.json, what GET",
    ` * /openapi.json serves) by scripts/openapiToTypeScript.ts. Do not edit; run`,
    ` * \`${API_TYPES_REGENERATE}\` after changing the API.`,
    " */",
  ];
  for (const [name, value] of Object.entries(components)) {
    const schema = schemaAt(value);
    out.push("", ...docComment(schema, ""));
    const type = typeText(schema);
    out.push(hasProperties(schema) ? `export interface ${typeName(name)} ${type}` : `export type ${typeName(name)} = ${type};`);
  }
  return `${out.join("\n")}\n`;
}
