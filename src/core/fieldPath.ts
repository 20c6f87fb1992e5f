/**
 * How an error names a part of a JSON value: `messages[3].content[0].input`,
 * with a member whose name is not an identifier in brackets
 * (`metadata["x-y"]`), so that the path reads back as JavaScript.
 */

/** The path of member `key` of the object at `parent` (`""` for the value itself). */
export function fieldPath(parent: string, key: string): string {
  const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `[${JSON.stringify(key)}]`;
  if (parent === "") return name;
  return name.startsWith("[") ? `${parent}${name}` : `${parent}.${name}`;
}
