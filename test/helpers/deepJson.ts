/**
 * JSON nested far deeper than any serializer's stack allows, written as text:
 * `JSON.stringify` itself overflows near 4,000 levels, so tests build the
 * text by hand and let `JSON.parse` (which takes any depth) read it.
 */

/** `{"a":[{"a":[ … 1 … ]}]}`: `levels` levels of objects and arrays, alternating. */
export function deeplyNestedJson(levels: number): string {
  const objects = Math.ceil(levels / 2);
  const arrays = Math.floor(levels / 2);
  return '{"a":['.repeat(arrays) + (objects > arrays ? '{"a":1}' : "1") + "]}".repeat(arrays);
}

/** An Anthropic conversation (as JSON text) whose one tool call takes `inputJson` as its input. */
export function toolCallWithInput(inputJson: string): string {
  return (
    '[{"role":"user","content":"run it"},' +
    `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"query","input":${inputJson}}]},` +
    '{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"done"}]}]'
  );
}
