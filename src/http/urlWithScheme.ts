import { parseUrl } from "./parseUrl.js";

/**
 * White space or a control character anywhere: the URL parser drops tabs and
 * newlines and a control at either end, and percent-encodes the rest, so such
 * a value is a typo (a pasted line break, a no-break space) the service
 * refuses rather than quietly repairs. Values.schema.json says the same.
 */
const SPACE_OR_CONTROL = /[\s\p{Cc}]/u;

/** {@link isUrlWithScheme} in words, after "a URL starting with http:// or https://". */
export const URL_WITHOUT_SPACES = "without spaces or control characters";

/**
 * Whether a configured value is a URL with one of the given schemes
 * (`"https:"`, with the colon, as `URL.protocol` has it) and none of
 * {@link SPACE_OR_CONTROL}. One rule for the service's environment table and
 * the CLI, which reads `ANTHROPIC_BASE_URL` without loading that table (it
 * imports the queue and webhook modules).
 */
export function isUrlWithScheme(value: string, schemes: readonly string[]): boolean {
  const url = SPACE_OR_CONTROL.test(value) ? undefined : parseUrl(value);
  return url !== undefined && schemes.includes(url.protocol);
}
