/**
 * A file path written as one line of text, and read back.
 *
 * Paths are the agent's data, and a path may hold a line break (Unix allows
 * one, and a model can pass one by mistake). Written as it is, it becomes two
 * paths when a file block is read back line by line, and two broken items in
 * the offline summary. So a path holding a control character is written as a
 * JSON string literal, one line with the break escaped, which reads back as
 * exactly that path. A path that opens with a quote is written the same way,
 * so a plain path is never taken for an escaped one.
 */

/** A path that must be escaped to stay one line that reads back as itself. */
const NEEDS_ESCAPE = /^"|[\u0000-\u001f\u007f]/;

/** `path` as one line: itself, or a JSON string literal when it needs escaping. */
export function pathLine(path: string): string {
  return NEEDS_ESCAPE.test(path) ? JSON.stringify(path) : path;
}

/** The path a line written by {@link pathLine} holds. */
export function pathOfLine(line: string): string {
  if (!line.startsWith('"')) return line;
  try {
    const path: unknown = JSON.parse(line);
    return typeof path === "string" ? path : line;
  } catch {
    // Not one of ours (a list written by hand, say): the line is the path.
    return line;
  }
}
