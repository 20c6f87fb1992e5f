/**
 * Helm checks values.schema.json's patterns with Go's regexp, the tests with
 * Ajv's ECMAScript: every pattern keeps to the dialect both read alike
 * (regexDialect.ts), and Go's own regexp is asked to agree with Ajv on
 * values around white space, control characters and non-ASCII letters.
 */
import { describe, expect, it } from "vitest";
import { changed, readSchema, validateValues } from "./chart.js";
import { SERVICE_WHITESPACE } from "./configSchema.js";
import { ajvRegExp, dialectProblems, GO_AVAILABLE, goRegexpMatches, schemaPatterns } from "./regexDialect.js";

const patterns = schemaPatterns(readSchema());

/**
 * Characters the dialects or the trims disagree on: the service's white
 * space, Go's (U+0085), controls, a zero-width space, letters that case-fold
 * or IDNA-map to ASCII (Kelvin sign, long s, fullwidth A, dotted I), non-ASCII
 * digits, an astral character, and the separators patterns use.
 */
const SPECIALS = [
  ...SERVICE_WHITESPACE.map((code) => String.fromCodePoint(code)),
  ...Array.from({ length: 0x20 }, (_, code) => String.fromCodePoint(code)),
  ...Array.from({ length: 0x21 }, (_, index) => String.fromCodePoint(0x7f + index)),
  "\u200b", "\u212a", "\u017f", "\uff21", "\uff15", "\u0663", "\u0130", "é", "\u{1f600}", "{", "}", ",", ".", ":", "/", "-", "*",
];

/** Values each pattern is meant for, one or another. */
const BASES = ["", "8080", "0.5", "720", "info", "TRUE", "http://a.example/x", "redis://r:6379", "10.0.0.0/8", "fd00::1/64", "*.svc.local", "{p}x", "h:6379", "m", "5s", "1Gi", "whsec_QUJD"];

/** Each base, and each base with each special character before, after and inside it. */
/** `text` as JSON with every non-ASCII character escaped, so a failure shows which space it was. */
function shown(text: string): string {
  return JSON.stringify(text).replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}

const SAMPLES = [...new Set(BASES.flatMap((base) => [base, ...SPECIALS.flatMap((c) => [c + base, base + c, base.slice(0, 1) + c + base.slice(1)])]))];

describe("values.schema.json's patterns", () => {
  it("spell every class out, in the dialect Go's regexp and ECMAScript read alike", () => {
    expect(patterns.length).toBeGreaterThan(40);
    expect(patterns.flatMap(({ path, pattern }) => dialectProblems(pattern).map((problem) => `${path}: ${problem}`))).toEqual([]);
  });

  it.each(["^\\s*$", "^\\S+$", "^\\d$", "^\\w$", "^a.b$", "^[^\\s\\p{Cc}]$", "^\\u00a0$", "^(?=a)a$", "^(?i)a$", "^a{$", "^a}$", "^[[:alpha:]]$", "^\\-$", "^[]a]$", "^(a)\\1$"])(
    "finds %s outside that dialect",
    (pattern) => {
      expect(dialectProblems(pattern)).not.toEqual([]);
    },
  );

  it.each(["^[ \\t\\x0B\\x85-\\x9F]*$", "^(?:[hH]ttps?://[^ \\-\\]]+)?$", "^[0-9]{1,3}(,[0-9]{2,})*$", "^\\{[^{}]+\\}\\.\\*$"])("takes %s as within it", (pattern) => {
    expect(dialectProblems(pattern)).toEqual([]);
  });

  it.skipIf(!GO_AVAILABLE)("match in Go's regexp (Helm) exactly what they match in Ajv, around white space, controls and non-ASCII letters (needs go)", () => {
    const results = goRegexpMatches(
      patterns.map((p) => p.pattern),
      SAMPLES,
    );
    const differences = patterns.flatMap(({ path, pattern }, index) => {
      const result = results[index]!;
      if ("error" in result) return [`${path}: Go refuses the pattern: ${result.error}`];
      const js = ajvRegExp(pattern);
      return SAMPLES.flatMap((sample, at) =>
        js.test(sample) === result.matches[at] ? [] : [`${path}: ${shown(sample)} matches in ${result.matches[at] ? "Go" : "Ajv"} only`],
      );
    });
    expect(differences.slice(0, 20), `${differences.length} differences`).toEqual([]);
  });
});

/** Whether values.schema.json refuses the defaults with `path` set to `value` because of that value's pattern. */
function patternRefuses(path: string, value: string): boolean {
  validateValues(changed(path, value));
  const where = `/${path.replaceAll(".", "/")}`;
  return (validateValues.errors ?? []).some((error) => error.instancePath === where && error.keyword === "pattern");
}

/**
 * Values outside `config` that KEDA, Prometheus and the service's REDIS_URL
 * take as they are (the chart trims nothing there): no white space, no
 * control character, wherever it is and whichever dialect reads it.
 */
const FREE_TEXT: Record<string, { takes: string[]; refuses: string[] }> = {
  "redis.url": {
    takes: ["redis://redis:6379", "rediss://user:pa%20ss@r.example:6380/2", "redis://[::1]:6379"],
    refuses: ["http://redis:6379", "redis://", "redis://redis:6379\u00a0", " redis://redis:6379", "redis://re dis", "redis://redis\u3000:6379", "redis://redis:6379\u0085", "redis://r\ufeff"],
  },
  "keda.redis.address": {
    takes: ["redis:6379", "a:6379,b:6380", "10.0.0.1:6379", "[fd00::1]:6379"],
    refuses: ["redis", "redis:port", "redis :6379", "redis:6379\u00a0", "\u3000redis:6379", "redis\t:6379", "a:1,", "re\u0000dis:6379", "redis:6379\u2028"],
  },
  "keda.prometheus.serverAddress": {
    takes: ["http://prometheus:9090", "https://prom.example/prefix"],
    refuses: ["prometheus:9090", "http://", "http://a b", "http://prom\u00a0", "http://prom\u2028", "ftp://prom", "http://prom\u0007"],
  },
  "metrics.prometheusRule.runbookBaseUrl": {
    takes: ["https://github.com/me/compactd/blob/main/docs/OPERATIONS.md", "http://wiki.internal/runbook"],
    refuses: ["docs/OPERATIONS.md", "https://", "https://wiki/run book", "https://wiki\u3000", "https://wiki\ufeff", "https://wiki/\u0085"],
  },
};

describe("free-text values outside config, which other programs read as they are", () => {
  it.each(Object.entries(FREE_TEXT).flatMap(([path, { takes }]) => takes.map((value) => [path, value] as const)))("%s takes %j", (path, value) => {
    expect(patternRefuses(path, value)).toBe(false);
  });

  it.each(Object.entries(FREE_TEXT).flatMap(([path, { refuses }]) => refuses.map((value) => [path, value] as const)))("%s refuses %j", (path, value) => {
    expect(patternRefuses(path, value)).toBe(true);
  });
});

if (!GO_AVAILABLE) console.warn("schemaPatterns.test.ts: no `go` on PATH, so Go's regexp was not asked to agree with Ajv (CI installs Go)");
