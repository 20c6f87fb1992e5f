import { describe, expect, it } from "vitest";
import { createCompactor } from "../../src/core/compactor.js";
import { scriptedSummarizer } from "../helpers/scriptedSummarizer.js";
import {
  DEFAULT_KEEP_RECENT_TOKENS,
  DEFAULT_RESERVE_TOKENS,
  DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS,
  isAboveThreshold,
  MAX_SUMMARIZATION_STALL_TIMEOUT_MS,
  normalizeSettings,
  shouldCompact,
  summarizerInputBudget,
  summaryBudget,
  threshold,
  turnPrefixBudget,
} from "../../src/core/settings.js";

describe("settings", () => {
  it("fills in the documented defaults", () => {
    const s = normalizeSettings({ contextWindow: 200_000 });
    expect(DEFAULT_KEEP_RECENT_TOKENS).toBe(20_000);
    expect(DEFAULT_RESERVE_TOKENS).toBe(16_384);
    expect(DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS).toBe(120_000);
    expect(s).toEqual({
      enabled: true,
      contextWindow: 200_000,
      reserveTokens: 16_384,
      keepRecentTokens: 20_000,
      maxSummaryTokens: 0,
      stallTimeoutMs: 120_000,
    });
  });

  it("scales keep-recent down to a quarter of the usable window on small windows", () => {
    expect(normalizeSettings({ contextWindow: 20_000, reserveTokens: 8_000 }).keepRecentTokens).toBe(3_000);
    expect(normalizeSettings({ contextWindow: 200_000, reserveTokens: 16_384 }).keepRecentTokens).toBe(20_000);
    expect(normalizeSettings({ contextWindow: 32_000, keepRecentTokens: 1_000 }).keepRecentTokens).toBe(1_000);
  });

  it("puts the threshold at window minus reserve, at least 1, and off without a window", () => {
    expect(threshold(normalizeSettings({ contextWindow: 100_000, reserveTokens: 10_000 }))).toBe(90_000);
    expect(threshold(normalizeSettings({ contextWindow: 1_000, reserveTokens: 5_000 }))).toBe(1);
    expect(threshold(normalizeSettings({}))).toBe(0);
  });

  it("compacts strictly above the threshold: T is false, T+1 is true", () => {
    const s = normalizeSettings({ contextWindow: 100_000, reserveTokens: 10_000 });
    expect(shouldCompact(s, 90_000)).toBe(false);
    expect(shouldCompact(s, 90_001)).toBe(true);
  });

  it("is above the threshold strictly past it, and never without a window", () => {
    const s = normalizeSettings({ contextWindow: 100_000, reserveTokens: 10_000 });
    expect(isAboveThreshold(s, 90_000)).toBe(false);
    expect(isAboveThreshold(s, 90_001)).toBe(true);
    expect(isAboveThreshold(normalizeSettings({}), 1_000_000)).toBe(false);
  });

  it("is above the threshold while disabled: disabling stops automatic compaction, not the window from filling", () => {
    const disabled = normalizeSettings({ contextWindow: 100_000, reserveTokens: 10_000, enabled: false });
    expect(isAboveThreshold(disabled, 90_001)).toBe(true);
    expect(shouldCompact(disabled, 90_001)).toBe(false);
  });

  it("never asks to compact when disabled or without a window", () => {
    expect(shouldCompact(normalizeSettings({ contextWindow: 100_000, enabled: false }), 1_000_000)).toBe(false);
    expect(shouldCompact(normalizeSettings({}), 1_000_000)).toBe(false);
  });

  it("caps the summary at four fifths of the reserve, the configured maximum and keep-recent, never below 1024", () => {
    expect(summaryBudget(normalizeSettings({ contextWindow: 200_000 }))).toBe(13_107);
    expect(summaryBudget(normalizeSettings({ contextWindow: 200_000, maxSummaryTokens: 4_000 }))).toBe(4_000);
    expect(summaryBudget(normalizeSettings({ contextWindow: 20_000, reserveTokens: 8_000 }))).toBe(3_000);
    expect(summaryBudget(normalizeSettings({ contextWindow: 200_000, reserveTokens: 500 }))).toBe(1_024);
  });

  it("gives the turn-prefix summary half the summary cap, never below 512", () => {
    expect(turnPrefixBudget(normalizeSettings({ contextWindow: 200_000 }))).toBe(6_553);
    expect(turnPrefixBudget(normalizeSettings({ contextWindow: 200_000, reserveTokens: 500 }))).toBe(512);
  });

  it("holds a tenth of the summarizer input budget back for the provider's own counting", () => {
    const s = normalizeSettings({ contextWindow: 100_000 });
    expect(summarizerInputBudget(s, 10_000, 1_000, 4_000)).toBe(76_500);
    expect(summarizerInputBudget(s, 100_000, 1_000, 0)).toBe(0);
  });

  it("treats zero as unset", () => {
    const s = normalizeSettings({ contextWindow: 200_000, reserveTokens: 0, keepRecentTokens: 0, maxSummaryTokens: 0, stallTimeoutMs: 0 });
    expect(s.reserveTokens).toBe(DEFAULT_RESERVE_TOKENS);
    expect(s.keepRecentTokens).toBe(DEFAULT_KEEP_RECENT_TOKENS);
    expect(s.maxSummaryTokens).toBe(0);
    expect(s.stallTimeoutMs).toBe(DEFAULT_SUMMARIZATION_STALL_TIMEOUT_MS);
    expect(normalizeSettings({ contextWindow: 0 }).contextWindow).toBe(0);
  });

  it("refuses a stall timeout above the one the API and the CLI take, naming the field", () => {
    expect(normalizeSettings({ stallTimeoutMs: MAX_SUMMARIZATION_STALL_TIMEOUT_MS }).stallTimeoutMs).toBe(MAX_SUMMARIZATION_STALL_TIMEOUT_MS);
    expect(() => normalizeSettings({ stallTimeoutMs: MAX_SUMMARIZATION_STALL_TIMEOUT_MS + 1 })).toThrow(
      new TypeError(`settings.stallTimeoutMs must be a whole number of milliseconds from 0 to ${MAX_SUMMARIZATION_STALL_TIMEOUT_MS}, got ${MAX_SUMMARIZATION_STALL_TIMEOUT_MS + 1}`),
    );
  });

  it("refuses a negative, non-finite or fractional number in any numeric setting, naming the field", () => {
    const fields = ["contextWindow", "reserveTokens", "keepRecentTokens", "maxSummaryTokens", "stallTimeoutMs"] as const;
    for (const field of fields) {
      for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, 1.5, "2000" as unknown as number]) {
        expect(() => normalizeSettings({ contextWindow: 200_000, [field]: bad }), `${field}: ${String(bad)}`).toThrow(
          new RegExp(`^settings\\.${field} must be a whole number`),
        );
      }
    }
  });

  it("refuses an enabled flag that is not a boolean, rather than read the string \"false\" as on", () => {
    expect(() => normalizeSettings({ contextWindow: 200_000, enabled: "false" as unknown as boolean })).toThrow(
      new TypeError('settings.enabled must be true or false, got "false"'),
    );
    expect(normalizeSettings({ contextWindow: 200_000, enabled: false }).enabled).toBe(false);
  });

  it("refuses createCompactor's settings the same way", () => {
    expect(() => createCompactor({ settings: { contextWindow: 200_000, stallTimeoutMs: 2 ** 31 }, summarizer: scriptedSummarizer() })).toThrow(TypeError);
  });
});
