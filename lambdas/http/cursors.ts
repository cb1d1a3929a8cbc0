/*
 * Sealed pagination cursors: every listing's and the export's `cursor` is the store's own cursor
 * encrypted and authenticated with keys of the stack, bound to the listing it came from.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { ValidationError } from '../core/errors.ts';
import type { OperationDeclaration } from '../operations/declaration.ts';
import type { Implementation, OperationRequest } from './operation.ts';

/**
 * Encrypt-then-MAC: AES-256-CTR under a random IV hides what the store's cursor holds (sort keys,
 * a token's hash), and HMAC-SHA256 over the binding, the IV and the ciphertext makes a forged,
 * edited or foreign cursor a 400 before anything is decrypted or read. Both keys come from the
 * session signing key through HKDF-SHA256, each with its own label (docs/decisions.md says why).
 */
export interface CursorSeal {
  seal(inner: string, binding: string): Promise<string>;
  /** The store's cursor, or a 400 VALIDATION_ERROR for any cursor this stack did not seal for `binding`. */
  open(cursor: string, binding: string): Promise<string>;
}

const IV_BYTES = 16;
const MAC_BYTES = 32;
/** Longer than any cursor this stack seals (a store's cursor is at most 4 KB). */
const MAX_CURSOR_LENGTH = 8192;

const invalid = () =>
  new ValidationError(
    'The cursor is invalid: it is not one this listing gave (or it was edited, or the stack key changed); use nextCursor from a previous page, or start again without one.',
  );

function derive(root: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), `pipeline-synthesis cursor ${label} v1`, 32));
}

function macOf(key: Buffer, binding: string, iv: Buffer, ciphertext: Buffer): Buffer {
  return createHmac('sha256', key).update(binding).update('\0').update(iv).update(ciphertext).digest();
}

/** A seal whose keys are derived from `rootKey` (read lazily; re-derived when it changes, as on rotation). */
export function cursorSeal(rootKey: () => Promise<Buffer>): CursorSeal {
  let derived: { root: Buffer; encryption: Buffer; mac: Buffer } | undefined;
  const keys = async () => {
    const root = await rootKey();
    if (!derived?.root.equals(root)) {
      derived = { root, encryption: derive(root, 'encryption'), mac: derive(root, 'mac') };
    }
    return derived;
  };
  return {
    async seal(inner, binding) {
      const { encryption, mac } = await keys();
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-ctr', encryption, iv);
      const ciphertext = Buffer.concat([cipher.update(inner, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, ciphertext, macOf(mac, binding, iv, ciphertext)]).toString('base64url');
    },
    async open(cursor, binding) {
      if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
      const bytes = Buffer.from(cursor, 'base64url');
      if (bytes.toString('base64url') !== cursor || bytes.length <= IV_BYTES + MAC_BYTES) throw invalid();
      const { encryption, mac } = await keys();
      const iv = bytes.subarray(0, IV_BYTES);
      const ciphertext = bytes.subarray(IV_BYTES, bytes.length - MAC_BYTES);
      const expected = macOf(mac, binding, iv, ciphertext);
      if (!timingSafeEqual(expected, bytes.subarray(bytes.length - MAC_BYTES))) throw invalid();
      const decipher = createDecipheriv('aes-256-ctr', encryption, iv);
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    },
  };
}

/**
 * What a cursor is bound to: the operation, the caller's team and user, its path parameters and
 * its other query parameters (a filter), so a cursor continues only the listing it came from.
 */
export function cursorBinding(
  declaration: OperationDeclaration,
  {
    principal,
    params,
    query,
  }: Pick<OperationRequest<OperationDeclaration>, 'principal' | 'params' | 'query'>,
): string {
  const filters = Object.entries((query ?? {}) as Record<string, unknown>)
    .filter(([name, value]) => name !== 'cursor' && name !== 'limit' && value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return JSON.stringify([
    declaration.name,
    principal?.teamId ?? null,
    principal?.userId ?? null,
    Object.entries((params ?? {}) as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
    filters,
  ]);
}

/**
 * A listing's implementation with sealed cursors: the `cursor` it is given is opened (a 400 unless
 * this stack sealed it for this listing) and the `nextCursor` it answers is sealed.
 */
export function withSealedCursors<D extends OperationDeclaration>(
  declaration: D,
  seal: CursorSeal,
  implementation: Implementation<D>,
): Implementation<D> {
  return async (request) => {
    const binding = cursorBinding(declaration, request as OperationRequest<OperationDeclaration>);
    const query = request.query as { cursor?: string };
    const opened =
      query.cursor === undefined
        ? request
        : { ...request, query: { ...query, cursor: await seal.open(query.cursor, binding) } };
    const answer = await implementation(opened as OperationRequest<D>);
    const body = 'body' in answer ? (answer.body as { nextCursor?: unknown } | undefined) : undefined;
    if (typeof body?.nextCursor === 'string') {
      return {
        ...answer,
        body: { ...body, nextCursor: await seal.seal(body.nextCursor, binding) },
      } as typeof answer;
    }
    return answer;
  };
}
