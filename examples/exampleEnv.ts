/**
 * What a runnable example needs from the environment, checked before it
 * starts: a missing key otherwise surfaces as the SDK's stack trace from deep
 * inside the first request, which tells a newcomer nothing.
 */

/** One line naming every variable that is missing and what it is for, or null when all are set. */
export function missingEnv(env: NodeJS.ProcessEnv, needed: Readonly<Record<string, string>>): string | null {
  const missing = Object.entries(needed).filter(([name]) => !env[name]?.trim());
  if (missing.length === 0) return null;
  return `not set: ${missing.map(([name, purpose]) => `${name} (${purpose})`).join(", ")}`;
}

/** Exits with status 2 and one line on stderr when `missingEnv` finds something missing. */
export function exitUnlessSet(example: string, needed: Readonly<Record<string, string>>): void {
  const problem = missingEnv(process.env, needed);
  if (problem === null) return;
  process.stderr.write(`${example}: ${problem}\n`);
  process.exit(2);
}
