/**
 * How a pipeline's data is written into a model's prompt. Every text that comes from a pipeline
 * (names, ids, kinds, settings, signal messages, run errors, timestamps) passes through
 * escapePromptData, so no data can open or close the <pipeline-data> block the system prompt
 * marks as data, neither as a tag (`</pipeline-data>`) nor as an HTML entity (`&lt;/pipeline-data&gt;`).
 */

/**
 * `text` with `<` and `&` written as the JSON escapes `\u003c` and `\u0026`: nothing tag-like can
 * start in it, and inside a JSON string it still reads as the same text.
 */
export function escapePromptData(text: string): string {
  return text.replace(/[<&]/g, (char) => (char === '<' ? '\\u003c' : '\\u0026'));
}

/** `value` as JSON, escaped: how strings (quoted) and settings are shown in a prompt. */
export function promptJson(value: unknown): string {
  return escapePromptData(JSON.stringify(value));
}
