/**
 * The `pipeline-synthesis` command line: commander wiring, global options, and the one place
 * that turns every outcome into an exit code (cli/failures.ts) — never a stack trace.
 */
import { Command, CommanderError } from 'commander';
import { addDataCommands } from './commands.ts';
import type { Io } from './context.ts';
import { addEvaluateCommand } from './evaluate-command.ts';
import { addEventCommands } from './event-commands.ts';
import { addExecutionCommands } from './execution-commands.ts';
import { addExportCommand } from './export-command.ts';
import { ApiFailure, CliFailure, EXIT } from './failures.ts';
import { addMemberCommands } from './member-commands.ts';
import { addMetricsCommand } from './metrics-command.ts';
import { addMonitorCommands } from './monitor-commands.ts';
import { addOptimizeCommand } from './optimize-command.ts';
import { addRolloutCommands } from './rollout-commands.ts';
import { addRunCommands } from './run-commands.ts';

declare const CLI_VERSION: string | undefined;
const version = typeof CLI_VERSION === 'string' ? CLI_VERSION : 'dev';

const EXIT_CODES_HELP = `
Configuration:
  --api-url / PIPELINE_SYNTHESIS_API_URL   the API's base URL (the stack's ApiUrl output)
  --token / PIPELINE_SYNTHESIS_API_TOKEN   an API token (psa_…) or a session access token
  --team / PIPELINE_SYNTHESIS_TEAM         a team of yours by id or name: members commands act on
                                           it; with the seed file, that seeded team's token is used
  With neither set and a .local/seed.json ($LOCAL_STATE_DIR) from npm start, the local stack
  and its first seeded team (or --team) are used, as stderr says.

Exit codes:
  0  success
  1  usage error, unreadable file, or the API could not be reached
  2  the API answered 4xx/5xx (its {error, message} is on stderr)
  3  synthesize --wait: the run failed
  4  synthesize --wait: --timeout passed; the run goes on
  5  evaluate: a case passed on the base and failed on the proposal
  130  Ctrl-C stopped the waiting (the run goes on), or evaluate after posting what finished`;

export function buildProgram(io: Io): Command {
  const program = new Command('pipeline-synthesis')
    .description('Pipeline Synthesis API from a terminal, a script or CI.')
    .version(version, '-V, --version')
    .option('--api-url <url>', 'the API base URL (default: $PIPELINE_SYNTHESIS_API_URL)')
    .option('--token <token>', 'the credential (default: $PIPELINE_SYNTHESIS_API_TOKEN)')
    .option(
      '--team <team>',
      "a team of yours by id or name (default: $PIPELINE_SYNTHESIS_TEAM, else the credential's)",
    )
    .option('--json', "print the API's JSON exactly as it answered, one answer a line")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', EXIT_CODES_HELP);
  addDataCommands(program, io);
  addExecutionCommands(program, io);
  addMetricsCommand(program, io);
  addRunCommands(program, io);
  addEvaluateCommand(program, io);
  addOptimizeCommand(program, io);
  addExportCommand(program, io);
  addRolloutCommands(program, io);
  addEventCommands(program, io);
  addMemberCommands(program, io);
  addMonitorCommands(program, io);
  return program;
}

/** Runs one command line (without node and the script) and answers its exit code. */
export async function runCli(args: readonly string[], io: Io): Promise<number> {
  const program = buildProgram(io);
  try {
    if (args.length === 0) {
      program.outputHelp();
      return EXIT.usage;
    }
    await program.parseAsync([...args], { from: 'user' });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version exit 0; commander has already printed any usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof ApiFailure) {
      io.stderr.write(`error: ${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof CliFailure) {
      io.stderr.write(`${error.exitCode === EXIT.usage ? 'error: ' : ''}${error.message}\n`);
      return error.exitCode;
    }
    // An argument parser (parseLimit, parseSeconds) throws a plain Error: a usage error.
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`error: ${message}\n`);
    return EXIT.usage;
  }
}
