/** `npm start`: runs the local stack until Ctrl-C, then stops everything it started. */
const startedAt = performance.now();
// Lambda runs every function in UTC. A worker thread cannot have a time zone of its own, so the
// stack's process takes Lambda's: its functions then run as worker threads (local/runtime/node.ts).
process.env.TZ = 'UTC';
// Set before the AWS SDK loads: it warns once per process about Node 20, which we support.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// Java's boot and the seed passwords' scrypt start before the rest of the stack's modules load.
const early = await (await import('./early.ts')).startEarly();
const { formatPhases, startLocalStack } = await import('./stack.ts');
const modulesMs = performance.now() - startedAt;

const port = Number(process.env.PORT ?? 3000);
const stateDir = process.env.LOCAL_STATE_DIR ?? '.local';
const stack = await startLocalStack({ port, stateDir, quiet: process.env.QUIET === '1', early }).catch(
  (error: Error) => {
    const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
    console.error(
      inUse
        ? `Port ${port} is in use: set PORT to a free port.`
        : `The local stack did not start: ${error.message}`,
    );
    process.exit(1);
  },
);
const readyMs = Math.round(performance.now() - startedAt);
if (process.env.LOG_LEVEL?.toLowerCase() === 'debug') {
  // Where the start's time went (bench/start-time.ts reads this line): the phases overlap, each
  // with its start and end in ms since this process began.
  const phases = [
    { name: 'modules', startMs: 0, endMs: modulesMs },
    ...stack.phases.map((phase) => ({
      ...phase,
      startMs: phase.startMs + modulesMs,
      endMs: phase.endMs + modulesMs,
    })),
  ];
  console.log(`[local] start phases: ${formatPhases(phases)}; ready ${readyMs} ms`);
}

const lines = [
  '',
  `Pipeline Synthesis API (local) ready in ${readyMs} ms at ${stack.apiUrl}`,
  `Functions: ${stack.functions.size} esbuild bundles, each in its own environments on Node ${stack.node.version}${stack.node.warning ? ' (not Lambda’s Node 24: see above)' : ''}; their log lines appear below, prefixed with their names`,
  `Review application: ${stack.apiUrl}/app/ (sign in with a seeded user below)`,
  `DynamoDB Local: ${stack.dynamodbEndpoint} (shared database: any region and dummy credentials see the tables)`,
  `Seeded credentials (also in ${stateDir}/seed.json):`,
  ...stack.teams.flatMap((team) => [
    `  ${team.name} (team ${team.teamId})`,
    `    user ${team.email} / ${team.password}`,
    `    API token ${team.apiToken}`,
    `    pipeline ${team.pipelineIds.join(', ')}`,
  ]),
  '',
  'Try:',
  `  curl -s -X POST -H "Authorization: Bearer ${stack.teams[0]?.apiToken}" ${stack.apiUrl}/pipelines/${stack.teams[0]?.pipelineIds[0]}/synthesize`,
  '',
  'Ctrl-C stops everything.',
];
console.log(lines.join('\n'));

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the local stack…`);
  await stack.stop();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
