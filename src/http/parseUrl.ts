/**
 * The URL `text` names (against `base`, if given), or undefined when the
 * WHATWG parser refuses it: what URL.canParse answers, without its flaw. On
 * Node 20, once a call site of URL.canParse is optimized, V8's fast API path
 * reads a one-byte string's Latin-1 characters as UTF-8 and refuses
 * `http://bücher.example` or `https://é.example` that it took a few thousand
 * calls before, so a hot path (callback URLs, request targets) would turn
 * valid input away at random.
 */
export function parseUrl(text: string, base?: string): URL | undefined {
  try {
    return new URL(text, base);
  } catch {
    return undefined;
  }
}
