/**
 * Counts server-sent events in a byte stream without parsing or altering it.
 *
 * The Anthropic SDK consumes the SSE stream itself and drops `ping` events
 * before any hook can see them, so a caller that needs to know "the server
 * sent something" (the stall watchdog) has to look at the bytes. Working on
 * bytes rather than decoded text keeps it cheap and immune to multi-byte
 * characters split across chunks: the delimiters are all ASCII.
 */

const LF = 0x0a;
const CR = 0x0d;

/**
 * A function to hand each chunk of the stream to, in order, which calls
 * `onEvent` at the end of every SSE event. An event ends at an empty line;
 * lines end with LF, CR or CRLF, and a CRLF may be split across chunks.
 */
export function sseEventScanner(onEvent: () => void): (chunk: Uint8Array) => void {
  let lineLength = 0;
  let eventOpen = false;
  let afterCR = false;
  return (chunk) => {
    for (const byte of chunk) {
      if (byte === LF && afterCR) {
        afterCR = false;
        continue;
      }
      afterCR = byte === CR;
      if (byte !== LF && byte !== CR) {
        lineLength++;
        continue;
      }
      if (lineLength > 0) eventOpen = true;
      else if (eventOpen) {
        eventOpen = false;
        onEvent();
      }
      lineLength = 0;
    }
  };
}

/** {@link sseEventScanner} as a web stream stage: passes bytes through untouched. */
export function sseEventCounter(onEvent: () => void): TransformStream<Uint8Array, Uint8Array> {
  const scan = sseEventScanner(onEvent);
  return new TransformStream({
    transform(chunk, controller) {
      scan(chunk);
      controller.enqueue(chunk);
    },
  });
}
