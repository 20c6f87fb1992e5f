/**
 * A job's conversation is checked once: the API walks the request body's
 * nesting depth before anything else reads it, and the worker, decoding the
 * payload the API stored from that very body, does not walk it again.
 * Observed on the real function, called through as it is.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import * as depth from "../../src/core/formats/nestingDepth.js";
import { markedRequest } from "../helpers/markedConversation.js";
import { startServiceHarness, type ServiceHarness } from "../helpers/serviceHarness.js";

vi.mock("../../src/core/formats/nestingDepth.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/core/formats/nestingDepth.js")>();
  return { ...real, tooDeeplyNested: vi.fn(real.tooDeeplyNested), refusedRequestField: vi.fn(real.refusedRequestField) };
});

let h: ServiceHarness;
beforeAll(async () => {
  h = await startServiceHarness("decode-once");
});
afterAll(async () => {
  await h.close();
});

describe("a compaction job", () => {
  it("has its conversation's nesting walked once, by the API, not again by the worker", async () => {
    const walks = [vi.mocked(depth.refusedRequestField), vi.mocked(depth.tooDeeplyNested)] as const;
    walks.forEach((walk) => walk.mockClear());
    const submitted = await h.submit(markedRequest("decode-once"));
    expect(submitted.status).toBe(202);
    const view = await h.view(String(submitted.body.id), 30);
    expect(view.status).toBe("completed");
    // The API's walk of the body (its nesting and refused keys); none in the worker.
    expect(walks.map((walk) => walk.mock.calls.length)).toEqual([1, 0]);
  });
});
