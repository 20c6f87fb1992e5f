/**
 * Request bodies that are legal but heavy, as issue 8 drove them at the API:
 * messages of one long run without whitespace (what a pasted base64 image,
 * a minified bundle or a hex dump looks like to a tokenizer), and large
 * bodies of ordinary text. Shared by the liveness tests and bench:heavy.
 */
const MIB = 1024 * 1024;

/** `messages` messages, each one run of `runLength` copies of a letter (a different letter per message). */
export function longRunBody(messages: number, runLength: number): string {
  const list = Array.from({ length: messages }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: String.fromCharCode(97 + (i % 26)).repeat(runLength),
  }));
  return JSON.stringify({ messages: list, contextWindow: 200_000, reason: "manual" });
}

/** ~`bytes` of ordinary text in messages of 1 MiB (or one smaller message): words and spaces, nothing adversarial. */
export function ordinaryBody(bytes: number): Buffer {
  const words = "the agent read the file and ran the tests again before it changed the function ";
  const perMessage = Math.min(MIB, bytes);
  const messages = Array.from({ length: Math.max(1, Math.floor(bytes / perMessage)) }, (_, i) => ({
    role: i % 2 === 0 ? "user" : "assistant",
    content: words.repeat(Math.floor((perMessage - 200) / words.length)),
  }));
  return Buffer.from(JSON.stringify({ messages, contextWindow: 200_000, reason: "manual" }));
}
