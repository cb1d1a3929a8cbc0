/**
 * Byte and token arithmetic for prompts. Sizes are measured in UTF-8 bytes because a byte-level
 * tokenizer never produces more tokens than bytes: a byte cap is a bound that holds for any text.
 */

/**
 * Bytes per token assumed by the estimate. English prose runs near 4 bytes per token and JSON
 * near 3, so dividing by 3 over-estimates the count for the text a prompt holds.
 */
export const BYTES_PER_TOKEN = 3;

/** The size of `text` in UTF-8, the unit every prompt cap is counted in. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text);
}

/** A pessimistic token count for text sent to the model. */
export function estimateTokens(text: string): number {
  return Math.ceil(byteLength(text) / BYTES_PER_TOKEN);
}

/** The longest prefix of `text` that fits in `maxBytes`, never splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = byteLength(char);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * `text` cut to at most `maxBytes` with a marker saying how much was left out; the marker is
 * counted in the bound, so the result never exceeds it.
 */
export function shorten(text: string, maxBytes: number): string {
  const total = byteLength(text);
  if (total <= maxBytes) return text;
  const marker = (omitted: number) => `…[truncated ${omitted} bytes]`;
  // The marker's own length depends on the number it prints; the longest it can be is for `total`.
  const room = maxBytes - byteLength(marker(total));
  if (room <= 0) return truncateUtf8(text, maxBytes);
  const kept = truncateUtf8(text, room);
  return `${kept}${marker(total - byteLength(kept))}`;
}

/** Truncation markers in rendered settings; a patch that copies one would store a shortened value. */
export const TRUNCATION_MARKER = '…[truncated ';
