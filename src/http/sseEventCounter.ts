/**
 * Counts the server-sent events of a byte stream that carry something,
 * without parsing or altering it.
 *
 * The stall watchdog needs to know "the server is still producing", and it
 * has to read the bytes to know it: the Anthropic SDK consumes the stream
 * itself. Keep-alives are not production: a `ping` event, or a comment line
 * (`: keep-alive`), says the connection is open, and a server stuck for good
 * can send them forever. So an event counts when the SSE rules would
 * dispatch it (it has a `data` field) and it is not named `ping`. Working on
 * bytes rather than decoded text keeps it cheap and immune to multi-byte
 * characters split across chunks: everything looked at is ASCII.
 */

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;

/** Enough of a line's head to tell `data`, `event: ping` and comments apart. */
const HEAD_BYTES = 12;

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const DATA_FIELD = encode("data");
const EVENT_FIELD = encode("event");
const PING = encode("ping");

/**
 * A function to hand each chunk of the stream to, in order, which calls
 * `onEvent` at the end of every event with data that is not a ping. An event
 * ends at an empty line; lines end with LF, CR or CRLF, and a CRLF may be
 * split across chunks.
 */
export function sseEventScanner(onEvent: () => void): (chunk: Uint8Array) => void {
  const head = new Uint8Array(HEAD_BYTES);
  let lineLength = 0;
  let hasData = false;
  let isPing = false;
  let afterCR = false;
  const endLine = (): void => {
    if (lineLength === 0) {
      if (hasData && !isPing) onEvent();
      hasData = false;
      isPing = false;
      return;
    }
    const line = head.subarray(0, Math.min(lineLength, HEAD_BYTES));
    if (isField(line, lineLength, DATA_FIELD)) hasData = true;
    // The last `event` line names the event, as in the SSE rules.
    else if (isField(line, lineLength, EVENT_FIELD)) isPing = valueIs(line, lineLength, EVENT_FIELD.length, PING);
    lineLength = 0;
  };
  return (chunk) => {
    for (const byte of chunk) {
      if (byte === LF && afterCR) {
        afterCR = false;
        continue;
      }
      afterCR = byte === CR;
      if (byte === LF || byte === CR) {
        endLine();
        continue;
      }
      if (lineLength < HEAD_BYTES) head[lineLength] = byte;
      lineLength++;
    }
  };
}

/** Whether the line is the field `name`: the name alone, or the name and a colon. (A comment starts with the colon.) */
function isField(line: Uint8Array, length: number, name: Uint8Array): boolean {
  if (length < name.length || !name.every((byte, i) => line[i] === byte)) return false;
  return length === name.length || line[name.length] === COLON;
}

/** Whether the field's value, after its colon and one optional space, is exactly `value`. */
function valueIs(line: Uint8Array, length: number, nameLength: number, value: Uint8Array): boolean {
  let start = nameLength + 1;
  if (line[start] === 0x20) start++;
  return length - start === value.length && value.every((byte, i) => line[start + i] === byte);
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
