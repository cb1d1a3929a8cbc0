/*
 * The content types API Gateway hands to a function as base64 (its binaryMediaTypes), declared once
 * for the stack and the local gateway: OTLP's protobuf (under both of its media types), and JSON, which an OTLP exporter may send
 * gzipped (API Gateway picks by Content-Type alone; parse.ts reads base64 JSON as well).
 */
export const BINARY_MEDIA_TYPES = [
  'application/x-protobuf',
  'application/protobuf',
  'application/json',
] as const;

/** Whether a request with this Content-Type reaches the function base64-encoded. */
export function isBinaryMediaType(contentType: string | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return (BINARY_MEDIA_TYPES as readonly string[]).includes(type);
}
