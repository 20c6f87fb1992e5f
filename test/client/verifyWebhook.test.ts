import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook, WebhookVerificationError, type WebhookEvent } from "../../src/client/index.js";
import { Redis } from "ioredis";
import { serviceKeys } from "../../src/queue/queueNames.js";
import { signWebhook, webhookIdFor } from "../../src/webhooks/signing.js";
import { markedConversation } from "../helpers/markedConversation.js";
import { TEST_WEBHOOK_SECRET } from "../helpers/serviceConfig.js";
import { waitUntil } from "../helpers/waitUntil.js";
import { startServiceUnderTest, type ServiceUnderTest } from "./serviceUnderTest.js";

// The service builds its callbacks as this same type (queue/jobLifecycle.ts), so they cannot drift apart.
const event: WebhookEvent = {
  type: "compaction.failed",
  id: "cmp_1",
  conversationId: null,
  error: { code: "summarizer_failed", message: "the summarizer kept failing", status: "failed" },
  metadata: null,
};
const body = JSON.stringify(event);
const otherSecret = `whsec_${Buffer.from("another-secret-of-enough-length!").toString("base64")}`;

function signed(payload = body, at = new Date()) {
  return signWebhook(TEST_WEBHOOK_SECRET, webhookIdFor("compaction.failed", "cmp_1"), payload, at);
}

function failure(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err;
    throw err;
  }
  throw new Error("expected verification to fail");
}

describe("verifyWebhook", () => {
  it("returns the event of a body signed with the service's signer", () => {
    expect(verifyWebhook(body, signed(), TEST_WEBHOOK_SECRET)).toEqual(event);
  });

  it("reads the headers as Node, fetch or a framework hands them over", () => {
    const headers = signed();
    const upperCase = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(verifyWebhook(Buffer.from(body), new Headers(headers), TEST_WEBHOOK_SECRET).id).toBe("cmp_1");
    expect(verifyWebhook(new TextEncoder().encode(body), upperCase, TEST_WEBHOOK_SECRET).id).toBe("cmp_1");
  });

  it("reads one of several signature header lines, as Node's headersDistinct hands them over during a secret rotation", () => {
    const headers = signed();
    const rotated = { ...headers, "webhook-signature": [`v1,${Buffer.from("signed with the old secret").toString("base64")}`, headers["webhook-signature"]] };
    expect(verifyWebhook(body, rotated, TEST_WEBHOOK_SECRET).id).toBe("cmp_1");
  });

  it("reads the headers of another fetch implementation, whose Headers is not this runtime's class", () => {
    // As undici's own package or node-fetch make them: a get() by name, but not `instanceof Headers` here.
    class OtherHeaders {
      readonly #map: Map<string, string>;
      constructor(init: Record<string, string>) {
        this.#map = new Map(Object.entries(init).map(([name, value]) => [name.toLowerCase(), value]));
      }
      get(name: string): string | null {
        return this.#map.get(name.toLowerCase()) ?? null;
      }
    }
    expect(verifyWebhook(body, new OtherHeaders(signed()) as never, TEST_WEBHOOK_SECRET).id).toBe("cmp_1");
  });

  it("throws a TypeError naming the secret when the receiver's own secret is missing or malformed, not a verification failure", () => {
    for (const secret of [undefined, "", "whsec_not base64!"]) {
      expect(() => verifyWebhook(body, signed(), secret as never), String(secret)).toThrow(TypeError);
      expect(() => verifyWebhook(body, {}, secret as never), String(secret)).toThrow(/^secret: /);
    }
  });

  it("refuses a body changed after signing, saying to check the secret and to pass the body as received", () => {
    const tampered = body.replace('"failed"}', '"cancelled"}');
    const message = failure(() => verifyWebhook(tampered, signed(), TEST_WEBHOOK_SECRET)).message;
    expect(message).toMatch(/failed verification: No matching signature found/);
    expect(message).toMatch(/secret/);
    expect(message).toMatch(/exactly as received/);
  });

  it("refuses a signature made with another secret", () => {
    expect(failure(() => verifyWebhook(body, signed(), otherSecret)).message).toMatch(/signature/i);
  });

  it("refuses a delivery signed too long ago to be anything but a replay", () => {
    const old = signed(body, new Date(Date.now() - 10 * 60_000));
    expect(failure(() => verifyWebhook(body, old, TEST_WEBHOOK_SECRET)).message).toMatch(/timestamp/i);
  });

  it("says which header is missing from an unsigned request", () => {
    const { "webhook-signature": _signature, ...unsigned } = signed();
    expect(failure(() => verifyWebhook(body, unsigned, TEST_WEBHOOK_SECRET)).message).toMatch(/webhook-signature header is missing/);
  });

  it("refuses a signed body that is not an event this client knows", () => {
    const future = JSON.stringify({ type: "compaction.progress", id: "cmp_1" });
    expect(failure(() => verifyWebhook(future, signed(future), TEST_WEBHOOK_SECRET)).message).toMatch(/compaction\.progress/);
  });
});

describe("verifyWebhook against the standardwebhooks package", () => {
  /** A delivery as a receiver may get one: signed right or not, on time or not, with one signature or several. */
  const delivery = fc.record({
    body: fc.oneof(
      fc.record({ id: fc.string({ minLength: 1 }), detail: fc.string({ unit: "grapheme" }) }).map(({ id, detail }) =>
        JSON.stringify({ ...event, id, error: { ...event.error, message: detail } }),
      ),
      fc.string({ unit: "grapheme" }),
    ),
    id: fc.string({ minLength: 1, maxLength: 40 }).filter((id) => !/[\r\n]/.test(id)),
    // Seconds off now, clear of the five-minute edges so both checks read the same clock second.
    offset: fc.oneof(fc.integer({ min: -295, max: 295 }), fc.integer({ min: 305, max: 4_000 }), fc.integer({ min: -4_000, max: -305 })),
    signedWith: fc.constantFrom(TEST_WEBHOOK_SECRET, otherSecret),
    tamper: fc.constantFrom("none", "body", "version", "no comma", "extra before", "extra after", "truncated", "timestamp text"),
  });

  it("accepts and refuses exactly what the package does, for the same reasons", () => {
    fc.assert(
      fc.property(delivery, ({ body: payload, id, offset, signedWith, tamper }) => {
        const at = new Date((Math.floor(Date.now() / 1000) + offset) * 1000);
        const headers: Record<string, string> = { ...signWebhook(signedWith, id, payload, at) };
        const signature = headers["webhook-signature"]!;
        const sent = tamper === "body" ? `${payload} ` : payload;
        if (tamper === "version") headers["webhook-signature"] = signature.replace("v1,", "v1a,");
        if (tamper === "no comma") headers["webhook-signature"] = signature.replace("v1,", "v1");
        if (tamper === "extra before") headers["webhook-signature"] = `v1,${Buffer.from("nope").toString("base64")} ${signature}`;
        if (tamper === "extra after") headers["webhook-signature"] = `${signature} v2,abc`;
        if (tamper === "truncated") headers["webhook-signature"] = signature.slice(0, -2);
        if (tamper === "timestamp text") headers["webhook-timestamp"] = `${headers["webhook-timestamp"]}abc`;

        let expected: { payload: unknown } | { reason: string };
        try {
          expected = { payload: new Webhook(TEST_WEBHOOK_SECRET).verify(sent, headers) };
        } catch (err) {
          expected = { reason: (err as Error).message };
        }
        let ours: { event: unknown } | { message: string };
        try {
          ours = { event: verifyWebhook(sent, headers, TEST_WEBHOOK_SECRET) };
        } catch (err) {
          ours = { message: (err as Error).message };
        }
        if ("reason" in expected) {
          expect(ours).toHaveProperty("message");
          // The package's reason, and after it what a receiver can do about a signature that does not match.
          expect((ours as { message: string }).message.startsWith(`webhook ${id} failed verification: ${expected.reason}`)).toBe(true);
        } else if ("event" in ours) {
          expect(ours.event).toEqual(expected.payload);
        } else {
          // Verified, then refused for its shape: a body that is not a compactd event.
          expect(ours.message).not.toContain("failed verification");
        }
      }),
      { numRuns: 1_000 },
    );
  });
});

// Results stored either way (COMPACTD_RESULT_ENCODING) reach the job view and the callback alike.
describe.each(["base64", "raw"])("verifyWebhook on callbacks the running service delivers, results stored as %s", (encoding) => {
  let service: ServiceUnderTest;
  beforeAll(async () => {
    service = await startServiceUnderTest(`client-webhook-${encoding}`, { env: { COMPACTD_RESULT_ENCODING: encoding } });
  });
  afterAll(async () => {
    await service.close();
  });

  it("reads a compaction.completed whose result is the job's, and a batch.completed", async () => {
    const client = service.client();
    const { receiver } = service.harness;
    const job = await client.compact(
      { messages: markedConversation(`hook-${randomUUID()}`), contextWindow: 20_000, settings: { reserveTokens: 4_000 }, callbackUrl: receiver.url() },
      { wait: 30 },
    );
    const batch = await client.batch([{ messages: [{ role: "user", content: "short" }], contextWindow: 20_000 }], { callbackUrl: receiver.url() });
    await waitUntil(() => receiver.received.length >= 2, "both callbacks arrive", 20_000);

    const events = receiver.received.map((callback) => verifyWebhook(callback.body, callback.headers, TEST_WEBHOOK_SECRET));
    const completed = events.find((e) => e.type === "compaction.completed");
    const batchDone = events.find((e) => e.type === "batch.completed");
    expect(completed).toMatchObject({ id: "id" in job ? job.id : "", result: "result" in job ? job.result : {} });
    // Stored in the form configured: raw bytes behind a zero byte, or base64 text.
    const redis = new Redis(service.harness.config.redisUrl!);
    const stored = await redis.getBuffer(serviceKeys(service.harness.config.queuePrefix).result("id" in job ? job.id : ""));
    redis.disconnect();
    expect(stored?.[0] === 0).toBe(encoding === "raw");
    expect(batchDone).toMatchObject({ id: batch.id, result: { counts: { nothing_to_compact: 1 } } });
  });
});

describe("verifyWebhook in a receiver built on a framework that parses JSON bodies", () => {
  let service: ServiceUnderTest;
  let receiver: FastifyInstance;
  const outcomes: { route: string; outcome: unknown }[] = [];
  beforeAll(async () => {
    service = await startServiceUnderTest("client-webhook-framework");
    receiver = Fastify();
    const verifyOn = (route: string) => async (request: FastifyRequest, reply: FastifyReply) => {
      try {
        outcomes.push({ route, outcome: verifyWebhook(request.body as string, request.headers, TEST_WEBHOOK_SECRET) });
      } catch (err) {
        outcomes.push({ route, outcome: err });
      }
      return reply.code(204).send();
    };
    // Fastify's default: the body parsed as JSON before the handler sees it.
    receiver.post("/parsed", verifyOn("parsed"));
    // The fix a receiver makes: take this route's body as text, verify it, then parse it.
    await receiver.register(async (raw) => {
      raw.addContentTypeParser("application/json", { parseAs: "string" }, (_request, text, done) => done(null, text));
      raw.post("/raw", verifyOn("raw"));
    });
    await receiver.listen({ port: 0, host: "127.0.0.1" });
  });
  afterAll(async () => {
    await receiver.close();
    await service.close();
  });

  it("refuses the parsed body with an error saying to pass the raw body, and verifies the raw one", async () => {
    const { port } = receiver.server.address() as AddressInfo;
    const client = service.client();
    const short = { messages: [{ role: "user" as const, content: "short" }], contextWindow: 20_000 };
    await client.batch([short], { callbackUrl: `http://127.0.0.1:${port}/parsed` });
    await client.batch([short], { callbackUrl: `http://127.0.0.1:${port}/raw` });
    await waitUntil(() => outcomes.length >= 2, "both callbacks arrive", 20_000);

    const parsed = outcomes.find((entry) => entry.route === "parsed")!.outcome;
    expect(parsed).toBeInstanceOf(TypeError);
    expect((parsed as Error).message).toMatch(/^rawBody: .*exactly as received/);
    expect(outcomes.find((entry) => entry.route === "raw")!.outcome).toMatchObject({ type: "batch.completed" });
  });
});
