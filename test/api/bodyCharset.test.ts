/**
 * JSON bodies are UTF-8 (RFC 8259, section 8.1). A body that says it is in
 * another charset is refused with 415 naming the charset, before it is
 * read, instead of being decoded as UTF-8 into other text than was sent; a
 * body whose bytes are not UTF-8 is refused with 400 saying where, instead
 * of being taken in with U+FFFD where its characters were. Over a real
 * connection, on both the event loop's path and an intake thread's.
 */
import { describe, expect, it } from "vitest";
import { apiForFile } from "../helpers/apiForFile.js";
import { rawRequest } from "../helpers/rawHttp.js";
import { bearer } from "../helpers/serviceConfig.js";

/** Bodies of at least this many bytes are taken in on an intake thread. */
const THREAD_MIN_BYTES = 64 * 1024;
const api = apiForFile("body-charset", { COMPACTD_INTAKE_THREAD_MIN_BYTES: String(THREAD_MIN_BYTES) });

/** A request with nothing to compact whose text is `content`, padded with ASCII to `size` bytes of JSON at least. */
function fits(content: string, size = 0): string {
  return JSON.stringify({ messages: [{ role: "user", content: `${content} ${"p".repeat(size)}` }], contextWindow: 1_000_000 });
}

function post(body: string | Buffer, contentType: string, path = "/v1/compactions") {
  return rawRequest(api.port, { method: "POST", path, headers: { ...bearer("acme"), "content-type": contentType }, body });
}

function errorOf(response: { body: string }): { code: string; message: string } {
  return (JSON.parse(response.body) as { error: { code: string; message: string } }).error;
}

describe("a body's charset", () => {
  it.each([
    ["latin1", Buffer.from(fits("café"), "latin1")],
    ["ISO-8859-1", Buffer.from(fits("café"), "latin1")],
    ["utf-16", Buffer.from(fits("café"), "utf16le")],
    ['"windows-1252"', Buffer.from(fits("café"), "latin1")],
  ])("refuses charset=%s with 415 naming it", async (charset, body) => {
    const response = await post(body, `application/json; charset=${charset}`);
    expect(response.status, response.body).toBe(415);
    expect(errorOf(response)).toMatchObject({ code: "unsupported_media_type" });
    expect(errorOf(response).message).toContain(`charset ${charset.replaceAll('"', "")}`);
  });

  it("names a charset of thousands of characters without repeating it all", async () => {
    const response = await post(fits("café"), `application/json; charset=${"k".repeat(10_000)}`);
    expect(response.status, response.body).toBe(415);
    expect(errorOf(response).message).toContain(`charset ${"k".repeat(40)}…`);
    expect(response.body).not.toContain("k".repeat(41));
  });

  it("refuses it for a batch, and for a body large enough for an intake thread", async () => {
    const batch = await post(JSON.stringify({ items: [JSON.parse(fits("café"))] }), "application/json; charset=latin1", "/v1/compactions/batch");
    expect(batch.status, batch.body).toBe(415);
    const large = await post(Buffer.from(fits("café", 2 * THREAD_MIN_BYTES), "latin1"), "application/json;charset=latin1");
    expect(large.status, large.body).toBe(415);
  });

  it("is not looked at where no route takes a body: an unknown route is still a 404", async () => {
    const response = await post(Buffer.from(fits("café"), "latin1"), "application/json; charset=latin1", "/v1/nowhere");
    expect(response.status, response.body).toBe(404);
  });

  it.each(["utf-8", "UTF-8", '"utf-8"', "utf8"])("takes charset=%s", async (charset) => {
    const response = await post(fits("café ✓"), `application/json; charset=${charset}`);
    expect(response.status, response.body).toBe(200);
  });
});

describe("a body that is not UTF-8", () => {
  it.each([
    ["Latin-1 text", 0],
    ["Latin-1 text in a body for an intake thread", 2 * THREAD_MIN_BYTES],
  ])("is refused with 400 saying where: %s", async (_what, size) => {
    const body = Buffer.from(fits("café", size), "latin1");
    const response = await post(body, "application/json");
    expect(response.status, response.body).toBe(400);
    expect(errorOf(response).code).toBe("invalid_json");
    expect(errorOf(response).message).toContain(`not valid UTF-8 at byte ${body.indexOf(0xe9)}`);
  });

  it("is refused in a batch item", async () => {
    const body = Buffer.from(JSON.stringify({ items: [JSON.parse(fits("ok")), JSON.parse(fits("café"))] }), "latin1");
    const response = await post(body, "application/json", "/v1/compactions/batch");
    expect(response.status, response.body).toBe(400);
    expect(errorOf(response).message).toContain(`not valid UTF-8 at byte ${body.indexOf(0xe9)}`);
  });

  it("is not confused with U+FFFD sent as such, which is text like any other", async () => {
    const response = await post(fits("\ufffd replacement character"), "application/json");
    expect(response.status, response.body).toBe(200);
  });
});
