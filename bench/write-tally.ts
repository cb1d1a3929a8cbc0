/**
 * A tallying proxy in front of a DynamoDB: forwards every request unchanged and counts the write
 * units each partition key of each table and each GSI receives, as DynamoDB bills them (bench only).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Value = Record<string, unknown>;
type Item = Record<string, Value>;

/** A table's key attributes and those of its GSIs (from DescribeTable). */
export interface TableKeys {
  pk: string;
  indexes: Array<{ name: string; pk: string; sk?: string }>;
}

export interface WriteTally {
  url: string;
  /** Units per `<table>[/<index>] <partition key>`. */
  units: Map<string, number>;
  reset(): void;
  stop(): Promise<void>;
}

/** An attribute value's size as DynamoDB counts it (UTF-8 strings, numbers ~1 byte per 2 digits). */
function valueSize(value: Value): number {
  const [type, content] = Object.entries(value)[0] ?? ['NULL', true];
  switch (type) {
    case 'S':
      return Buffer.byteLength(String(content));
    case 'N':
      return Math.ceil(String(content).replace(/^-|\./g, '').length / 2) + 1;
    case 'B':
      return Buffer.from(String(content), 'base64').length;
    case 'SS':
    case 'NS':
    case 'BS':
      return (content as string[]).reduce((sum, part) => sum + Buffer.byteLength(part), 0);
    case 'M':
      return 3 + itemSize(content as Item) + Object.keys(content as Item).length;
    case 'L':
      return 3 + (content as Value[]).reduce((sum, part) => sum + 1 + valueSize(part), 0);
    default:
      return 1;
  }
}

/** An item's size: attribute names plus values. */
export function itemSize(item: Item): number {
  return Object.entries(item).reduce(
    (sum, [name, value]) => sum + Buffer.byteLength(name) + valueSize(value),
    0,
  );
}

const unitsOf = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const keyText = (value: Value | undefined) => (value ? String(Object.values(value)[0]) : undefined);

/** Starts the proxy in front of `target`; `keysOf` gives each table's key attributes once known. */
export async function startWriteTally(
  target: string,
  keysOf: () => Map<string, TableKeys>,
): Promise<WriteTally> {
  const units = new Map<string, number>();
  const add = (key: string, by: number) => units.set(key, (units.get(key) ?? 0) + by);
  // A put: its item's units on its table key and on each index whose keys it carries.
  const put = (table: string, item: Item, factor: number) => {
    const keys = keysOf().get(table);
    if (!keys) return;
    const size = unitsOf(itemSize(item)) * factor;
    add(`${table} ${keyText(item[keys.pk])}`, size);
    for (const index of keys.indexes) {
      if (item[index.pk] && (!index.sk || item[index.sk]))
        add(`${table}/${index.name} ${keyText(item[index.pk])}`, size);
    }
  };
  // An update, delete or condition check: its item's size is not on the wire; one unit (items here are small).
  const touch = (table: string, key: Item, factor: number) => {
    const keys = keysOf().get(table);
    if (keys) add(`${table} ${keyText(key[keys.pk])}`, factor);
  };
  const tally = (operation: string, body: Value) => {
    if (operation === 'PutItem') put(String(body.TableName), body.Item as Item, 1);
    if (operation === 'UpdateItem' || operation === 'DeleteItem')
      touch(String(body.TableName), body.Key as Item, 1);
    if (operation === 'BatchWriteItem') {
      for (const [table, requests] of Object.entries(body.RequestItems as Record<string, Value[]>)) {
        for (const request of requests) {
          const { PutRequest, DeleteRequest } = request as { PutRequest?: Value; DeleteRequest?: Value };
          if (PutRequest) put(table, PutRequest.Item as Item, 1);
          if (DeleteRequest) touch(table, DeleteRequest.Key as Item, 1);
        }
      }
    }
    if (operation === 'TransactWriteItems') {
      // A transaction's writes are billed twice.
      for (const entry of body.TransactItems as Value[]) {
        const [kind, request] = Object.entries(entry)[0] as [string, Value];
        if (kind === 'Put') put(String(request.TableName), request.Item as Item, 2);
        else touch(String(request.TableName), request.Key as Item, 2);
      }
    }
  };
  const server: Server = createServer(async (request: IncomingMessage, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const operation = String(request.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
    const headers = { ...request.headers } as Record<string, string>;
    delete headers.host;
    delete headers.connection;
    try {
      const answer = await fetch(`${target}${request.url ?? '/'}`, {
        method: request.method,
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      const text = Buffer.from(await answer.arrayBuffer());
      // Only writes that succeeded are billed (a failed condition is billed too, but is rare here).
      if (answer.ok && body.length > 0) tally(operation, JSON.parse(body.toString('utf8')) as Value);
      const out: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (name !== 'content-encoding' && name !== 'content-length' && name !== 'transfer-encoding')
          out[name] = value;
      });
      response.writeHead(answer.status, { ...out, 'content-length': String(text.length) });
      response.end(text);
    } catch (error) {
      response.writeHead(502).end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    units,
    reset: () => units.clear(),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
