/**
 * What SQS checks and computes of a message, for the local queue: its body's size and characters,
 * its attributes and message group, the MD5 digests SendMessage answers with, and the attributes
 * as a Lambda event carries them. Refusals are SqsErrors named as SQS names them.
 */
import { createHash } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSMessageAttributes } from 'aws-lambda';

/** SQS's limit since August 2025 (it was 256 KiB before). */
export const MAX_MESSAGE_BYTES = 1024 * 1024;
const MAX_MESSAGE_ATTRIBUTES = 10;
/** SQS: 1 to 128 characters, letters, digits and punctuation. */
const MESSAGE_GROUP_ID = /^[A-Za-z0-9!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]{1,128}$/;

/** An SQS-style client error; `code` is the SQS error name (e.g. `InvalidMessageContents`). */
export class SqsError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = code;
  }
}

export function validateMessageGroupId(messageGroupId: string | undefined): void {
  if (messageGroupId === undefined || MESSAGE_GROUP_ID.test(messageGroupId)) return;
  throw new SqsError(
    'InvalidParameterValue',
    'Value for parameter MessageGroupId is invalid. Reason: it must be 1 to 128 letters, digits or punctuation.',
  );
}

export function md5Hex(data: Uint8Array): string {
  return createHash('md5').update(data).digest('hex');
}

export function validateBody(body: string): void {
  if (body.length === 0) throw new SqsError('InvalidParameterValue', 'The message body must not be empty.');
  if (Buffer.byteLength(body, 'utf8') > MAX_MESSAGE_BYTES) {
    throw new SqsError(
      'InvalidParameterValue',
      `The message body must be at most ${MAX_MESSAGE_BYTES} bytes.`,
    );
  }
  if (!hasOnlyAllowedCharacters(body)) {
    throw new SqsError('InvalidMessageContents', 'The message contains characters outside the allowed set.');
  }
}

/** SQS accepts #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF. */
function hasOnlyAllowedCharacters(body: string): boolean {
  for (const char of body) {
    const code = char.codePointAt(0) ?? 0;
    const allowed =
      code === 0x9 ||
      code === 0xa ||
      code === 0xd ||
      (code >= 0x20 && code <= 0xd7ff) ||
      (code >= 0xe000 && code <= 0xfffd) ||
      (code >= 0x10000 && code <= 0x10ffff);
    if (!allowed) return false;
  }
  return true;
}

export function validateMessageAttributes(attributes: Record<string, MessageAttributeValue>): void {
  const names = Object.keys(attributes);
  if (names.length > MAX_MESSAGE_ATTRIBUTES) {
    throw new SqsError(
      'InvalidParameterValue',
      `At most ${MAX_MESSAGE_ATTRIBUTES} message attributes are allowed.`,
    );
  }
  for (const [name, value] of Object.entries(attributes)) {
    const dataType = value.DataType ?? '';
    const isBinary = dataType.startsWith('Binary');
    if (!/^(String|Number|Binary)(\..+)?$/.test(dataType)) {
      throw new SqsError('InvalidParameterValue', `Message attribute ${name} has an invalid DataType.`);
    }
    if (isBinary ? value.BinaryValue === undefined : value.StringValue === undefined) {
      throw new SqsError('InvalidParameterValue', `Message attribute ${name} has no value.`);
    }
  }
}

/** The MD5 of message attributes as SQS computes it (names sorted, length-prefixed fields). */
export function md5OfMessageAttributes(attributes: Record<string, MessageAttributeValue>): string {
  const parts: Buffer[] = [];
  const lengthPrefixed = (bytes: Uint8Array) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    parts.push(length, Buffer.from(bytes));
  };
  for (const name of Object.keys(attributes).sort()) {
    const value = attributes[name];
    if (value === undefined) continue;
    lengthPrefixed(Buffer.from(name, 'utf8'));
    lengthPrefixed(Buffer.from(value.DataType ?? '', 'utf8'));
    if (value.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]));
      lengthPrefixed(value.BinaryValue);
    } else {
      parts.push(Buffer.from([1]));
      lengthPrefixed(Buffer.from(value.StringValue ?? '', 'utf8'));
    }
  }
  return md5Hex(Buffer.concat(parts));
}

export function toEventAttributes(attributes: Record<string, MessageAttributeValue>): SQSMessageAttributes {
  const event: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(attributes)) {
    event[name] = {
      ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
      ...(value.BinaryValue === undefined
        ? {}
        : { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }),
      stringListValues: [],
      binaryListValues: [],
      dataType: value.DataType ?? 'String',
    };
  }
  return event;
}
