import { describe, expect, it } from "vitest";
import { missingEnv } from "../../examples/exampleEnv.js";

describe("an example started without what it needs", () => {
  const needed = { ANTHROPIC_API_KEY: "talks to Claude", COMPACTD_WEBHOOK_SECRET: "verifies callbacks" };

  it("names every missing variable and its purpose in one line", () => {
    const problem = missingEnv({ COMPACTD_WEBHOOK_SECRET: "  " }, needed);
    expect(problem).toBe("not set: ANTHROPIC_API_KEY (talks to Claude), COMPACTD_WEBHOOK_SECRET (verifies callbacks)");
  });

  it("finds nothing missing when everything is set", () => {
    expect(missingEnv({ ANTHROPIC_API_KEY: "sk", COMPACTD_WEBHOOK_SECRET: "whsec_x" }, needed)).toBeNull();
  });
});
