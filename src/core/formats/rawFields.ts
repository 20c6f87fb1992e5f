/**
 * Reading fields out of untrusted message objects.
 *
 * Both provider shapes are parsed from whatever JSON the caller sent, so every
 * field is checked before it is used and every failure names the field's path:
 * a caller who sent a broken conversation must be able to fix it from the
 * error alone.
 */
import { InvalidConversationError } from "../errors.js";

export type RawObject = Readonly<Record<string, unknown>>;

export function isRawObject(value: unknown): value is RawObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** "a string", "an array", "null": what the caller sent, for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return `a ${typeof value}`;
}

/** The error for a role the shape does not have (or none at all), listing the ones it does. */
export function unknownRoleError(role: unknown, path: string, shape: string, roles: string): InvalidConversationError {
  const found = role === undefined ? "missing role" : `unknown role ${JSON.stringify(role)}`;
  return new InvalidConversationError(`${path}.role`, `${found}; ${shape} messages are ${roles}`);
}

export function requireObject(value: unknown, path: string, what: string): RawObject {
  if (!isRawObject(value)) {
    throw new InvalidConversationError(path, `${what} must be an object, got ${describeValue(value)}`);
  }
  return value;
}

export function requireString(obj: RawObject, key: string, path: string): string {
  const value = obj[key];
  if (typeof value !== "string") {
    throw new InvalidConversationError(`${path}.${key}`, `must be a string, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * A tool call id. Pairing calls with results is the one constraint compaction
 * must never break, and it is keyed on this id, so an id-less call cannot be
 * accepted and quietly treated as answered or unanswered.
 */
export function requireToolCallId(obj: RawObject, key: string, path: string, what: string): string {
  const value = obj[key];
  if (typeof value !== "string" || value === "") {
    throw new InvalidConversationError(`${path}.${key}`, `${what} needs a non-empty string id, got ${describeValue(value)}`);
  }
  return value;
}

/**
 * The caller's stored-turn id. Numbers are accepted because callers often use
 * database row ids; they are compared as strings everywhere else.
 */
export function readTurnId(message: RawObject, path: string): string | undefined {
  const value = message.turn_id;
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new InvalidConversationError(`${path}.turn_id`, `must be a string or a number, got ${describeValue(value)}`);
}

/** The `type` of a content block or part, which every block must have. */
export function requireBlockType(block: unknown, path: string): { block: RawObject; type: string } {
  const obj = requireObject(block, path, "a content block");
  const type = obj.type;
  if (typeof type !== "string" || type === "") {
    throw new InvalidConversationError(`${path}.type`, `a content block needs a string type, got ${describeValue(type)}`);
  }
  return { block: obj, type };
}
