/**
 * The callers of the poll benchmark, in a process of their own as real callers are: it measures a
 * bare GetItem on DynamoDB Local and GET /synthesis-runs/{id} through the local stack, one after
 * the other, and prints the figures as JSON. Run by bench/local-stack.ts.
 *
 * The polls go through node:http with a keep-alive Agent (one socket per caller), as a service
 * polling an API does; global fetch (undici) cost 1.5–2 × as much CPU per call in this process
 * (754 against 508 µs per poll, 487 against 241 per floor call), CPU the stack and DynamoDB Local
 * then did not get on a 2-CPU machine. The GetItem baseline keeps
 * the AWS SDK's own client (its NodeHttpHandler, keep-alive too).
 */
import { Agent, request } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../lambdas/wiring/aws.ts';

export interface LoadClientInput {
  apiUrl: string;
  dynamodbEndpoint: string;
  runsTable: string;
  runId: string;
  apiToken: string;
  samples: number;
  throughputMs: number;
  callers: number;
  /** Only this operation's throughput (after 100 warm calls): the CPU breakdown's load. */
  only?: 'getItem' | 'poll' | 'floor';
  /** The floor server (bench/floor-server.ts), for `only: 'floor'`. */
  floorUrl?: string;
}

export interface LoadClientOutput {
  getItemMs: number[];
  pollMs: number[];
  getItemPerSecond: number;
  pollPerSecond: number;
  /** With `only`: calls made in all, warm-up included, and this process's CPU time meanwhile. */
  operations?: number;
  cpuMicros?: number;
}

async function timeEach(count: number, operation: () => Promise<unknown>): Promise<number[]> {
  const durations: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await operation();
    durations.push(performance.now() - start);
  }
  return durations;
}

/** Operations completed by `callers` concurrent loops in `ms` milliseconds. */
async function completed(callers: number, ms: number, operation: () => Promise<unknown>): Promise<number> {
  let done = 0;
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < until) {
        await operation();
        done++;
      }
    }),
  );
  return done;
}

async function main(input: LoadClientInput): Promise<LoadClientOutput> {
  const db = createDocumentClient(
    new DynamoDBClient({
      endpoint: input.dynamodbEndpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
  );
  const getItem = () => db.send(new GetCommand({ TableName: input.runsTable, Key: { id: input.runId } }));
  const headers = { authorization: `Bearer ${input.apiToken}` };
  const agent = new Agent({ keepAlive: true, maxSockets: input.callers });
  const get = (apiUrl: string) =>
    new Promise<Buffer>((resolve, reject) => {
      const call = request(`${apiUrl}/synthesis-runs/${input.runId}`, { agent, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () =>
          response.statusCode === 200
            ? resolve(Buffer.concat(chunks))
            : reject(new Error(`poll answered ${response.statusCode}`)),
        );
      });
      call.on('error', reject);
      call.end();
    });
  const poll = () => get(input.apiUrl);

  if (input.only) {
    const operation = { getItem, poll, floor: () => get(input.floorUrl ?? '') }[input.only];
    const cpuBefore = process.cpuUsage();
    await timeEach(100, operation);
    const done = await completed(input.callers, input.throughputMs, operation);
    const perSecond = done / (input.throughputMs / 1000);
    const figures = {
      getItemMs: [],
      pollMs: [],
      getItemPerSecond: input.only === 'getItem' ? perSecond : 0,
      pollPerSecond: input.only === 'getItem' ? 0 : perSecond,
      operations: 100 + done,
      cpuMicros: ((usage) => usage.user + usage.system)(process.cpuUsage(cpuBefore)),
    };
    agent.destroy();
    return figures;
  }

  // Warm both paths (JIT, connections, the authorizer's cache) before measuring, and with the
  // callers' concurrency too: a poll's functions start an environment per concurrent invocation
  // (up to one per CPU), and one started cold in the middle of the measured window would count its
  // init and its unoptimized first calls against the stack's steady state.
  // Long enough for V8 to have optimized the hot paths of all five processes a poll crosses (the
  // client, the gateway, two environments, and DynamoDB Local's JIT): with 100 calls and 1 s each,
  // a later window of the same run still read 10–20 % faster than the first.
  await timeEach(500, getItem);
  await timeEach(500, poll);
  await completed(input.callers, 2_000, getItem);
  await completed(input.callers, 2_000, poll);
  // This machine is shared: its load moves within seconds. GetItem and the poll are measured in
  // turns (a call of each, then windows of a third of the time each) so both see the same load.
  const getItemMs: number[] = [];
  const pollMs: number[] = [];
  for (let i = 0; i < input.samples; i++) {
    getItemMs.push(...(await timeEach(1, getItem)));
    pollMs.push(...(await timeEach(1, poll)));
  }
  let getItems = 0;
  let polls = 0;
  const rounds = 3;
  for (let round = 0; round < rounds; round++) {
    getItems += await completed(input.callers, input.throughputMs / rounds, getItem);
    polls += await completed(input.callers, input.throughputMs / rounds, poll);
  }
  const figures = {
    getItemMs,
    pollMs,
    getItemPerSecond: getItems / (input.throughputMs / 1000),
    pollPerSecond: polls / (input.throughputMs / 1000),
  };
  agent.destroy();
  return figures;
}

const input = JSON.parse(process.argv[2] ?? '{}') as LoadClientInput;
process.stdout.write(JSON.stringify(await main(input)));
