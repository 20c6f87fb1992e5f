/**
 * Whether a configured value is a URL with one of the given schemes
 * (`"https:"`, with the colon, as `URL.protocol` has it). One rule for the
 * service's environment table and the CLI, which reads `ANTHROPIC_BASE_URL`
 * without loading that table (it imports the queue and webhook modules).
 */
export function isUrlWithScheme(value: string, schemes: readonly string[]): boolean {
  return URL.canParse(value) && schemes.includes(new URL(value).protocol);
}
