import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/api/buildApp.js";
import { conversation, reactTurn } from "../helpers/conversations.js";
import { bearer, serviceConfig } from "../helpers/serviceConfig.js";

describe("an API whose Redis cannot be reached", () => {
  it("answers 503 with Retry-After instead of hanging or failing with a 500, and reports not ready", async () => {
    // Nothing listens on port 1.
    const app = await buildApp({ ...serviceConfig("no-redis"), redisUrl: "redis://127.0.0.1:1" });
    try {
      const messages = conversation(...Array.from({ length: 5 }, () => reactTurn({ rounds: 3, toolResultChars: 2_000 })));
      const response = await app.inject({
        method: "POST",
        url: "/v1/compactions",
        headers: bearer("acme"),
        payload: { messages, contextWindow: 20_000, settings: { reserveTokens: 4_000 } },
      });
      expect(response.statusCode).toBe(503);
      expect(response.headers["retry-after"]).toBeDefined();
      expect(response.json().error.code).toBe("unavailable");
      expect((await app.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(503);
      // Deciding that there is nothing to compact needs no Redis.
      const nothing = await app.inject({
        method: "POST",
        url: "/v1/compactions",
        headers: bearer("acme"),
        payload: { messages: reactTurn({ rounds: 1 }), contextWindow: 200_000 },
      });
      expect(nothing.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });
});
